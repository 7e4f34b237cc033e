/* A DLManagedTensor made here carries the tensor it exports (retained) and its shape and
   strides, in one block freed by its deleter. */
typedef struct tn__dlpack { DLManagedTensor m; tn_tensor *t; int64_t shape[TN_MAX_DIMS], strides[TN_MAX_DIMS]; } tn__dlpack;

static void tn__dlpack_deleter(DLManagedTensor *m) {
    tn__dlpack *d = (tn__dlpack *)m->manager_ctx;
    tn_release(d->t);
    TN_FREE(d);
}
TNDEF void tn_dlpack_delete(DLManagedTensor *m) { if (m && m->deleter) m->deleter(m); }

TNDEF DLManagedTensor *tn_to_dlpack(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->requires_grad)
        return (DLManagedTensor *)tn__error("tn_to_dlpack: can't export a tensor that requires grad; export tn_detach(t)");
    DLDataType dt = {0, (uint8_t)(8 * tn_dtype_size(t->dtype)), 1};
    switch (t->dtype) {
    case TN_F32: case TN_F64: case TN_F16: dt.code = kDLFloat; break;
    case TN_BF16: dt.code = kDLBfloat; break;
    case TN_I32: case TN_I64: case TN_I8: case TN_I16: dt.code = kDLInt; break;
    case TN_U8: dt.code = kDLUInt; break;
    case TN_BOOL: dt.code = kDLBool; break;
    case TN_C64: case TN_C128: dt.code = kDLComplex; break;   /* 64 and 128 bits */
    default: return (DLManagedTensor *)tn__error("tn_to_dlpack: dtype %s has no DLPack code", tn_dtype_name(t->dtype));
    }
    tn__dlpack *d = (tn__dlpack *)TN_MALLOC(sizeof *d);
    if (!d) return (DLManagedTensor *)tn__error("tn_to_dlpack: out of memory");
    memset(d, 0, sizeof *d);
    d->t = tn_retain(t);
    for (int i = 0; i < t->ndim; i++) { d->shape[i] = t->shape[i]; d->strides[i] = t->strides[i]; }
    DLTensor *x = &d->m.dl_tensor;
    x->data = tn_data_ptr(t);   /* the first element; byte_offset 0, as PyTorch exports */
    x->device.device_type = t->device == TN_CUDA ? kDLCUDA : kDLCPU;
    x->device.device_id = t->device == TN_CUDA ? tn_cuda_current_device() : 0;
    x->ndim = t->ndim;
    x->dtype = dt;
    x->shape = d->shape;
    x->strides = d->strides;
    d->m.manager_ctx = d;
    d->m.deleter = tn__dlpack_deleter;
    return &d->m;
}

static void tn__dlpack_release(void *data, void *ctx) {
    (void)data;
    tn_dlpack_delete((DLManagedTensor *)ctx);
}
TNDEF tn_tensor *tn_from_dlpack(DLManagedTensor *m) {
    const char *fn = "tn_from_dlpack";
    if (!m) return (tn_tensor *)tn__error("%s: the DLManagedTensor is NULL", fn);
    const DLTensor *x = &m->dl_tensor;
    const DLDataType dt = x->dtype;
    tn_dtype dtype = TN_NUM_DTYPES;
    if (dt.lanes == 1) {
        if (dt.code == kDLFloat) dtype = dt.bits == 32 ? TN_F32 : dt.bits == 64 ? TN_F64 : dt.bits == 16 ? TN_F16 : TN_NUM_DTYPES;
        else if (dt.code == kDLBfloat && dt.bits == 16) dtype = TN_BF16;
        else if (dt.code == kDLInt) dtype = dt.bits == 32 ? TN_I32 : dt.bits == 64 ? TN_I64 : dt.bits == 8 ? TN_I8 : dt.bits == 16 ? TN_I16 : TN_NUM_DTYPES;
        else if (dt.code == kDLUInt && dt.bits == 8) dtype = TN_U8;
        else if (dt.code == kDLBool && dt.bits == 8) dtype = TN_BOOL;
        else if (dt.code == kDLComplex) dtype = dt.bits == 64 ? TN_C64 : dt.bits == 128 ? TN_C128 : TN_NUM_DTYPES;
    }
    tn_device device = TN_NUM_DEVICES;
    if (x->device.device_type == kDLCPU || x->device.device_type == kDLCUDAHost) device = TN_CPU;
    else if (x->device.device_type == kDLCUDA && tn_cuda_is_available() && x->device.device_id == tn_cuda_current_device()) device = TN_CUDA;
    const char *why = dtype == TN_NUM_DTYPES ? "a dtype this library does not have" : device == TN_NUM_DEVICES ? "memory on a device this library cannot reach"
                    : device == TN_CUDA && (dtype == TN_I8 || dtype == TN_I16) ? "int8/int16 on CUDA (CPU only)"
                    : device == TN_CUDA && tn_dtype_is_complex(dtype) ? "complex64/complex128 on CUDA (CPU only)"
                    : x->ndim < 0 || x->ndim > TN_MAX_DIMS ? "more dims than TN_MAX_DIMS" : NULL;
    tn_tensor *t = NULL;
    if (!why) t = tn__from_memory(fn, (char *)x->data + x->byte_offset, x->shape, x->ndim, x->strides, dtype, device, tn__dlpack_release, m);
    if (t) return tn__own(t);
    if (why) tn__error("%s: DLPack tensor (type code %d, %d bits, %d lanes, device type %d:%d, %d dims) has %s", fn, dt.code, dt.bits, dt.lanes,
                       (int)x->device.device_type, (int)x->device.device_id, (int)x->ndim, why);
    tn_dlpack_delete(m);   /* the producer's memory is given back on every path */
    return NULL;
}
