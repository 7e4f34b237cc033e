/* ---- the GPU unit's entry points: forwarded to tensor_cuda.cu, or why not ---- */
static const tn_cuda_unit *tn__cuda_unit(void) {
#ifdef TENSOR_CUDA
    const tn_cuda_unit *unit = tn_cuda_unit_get(); /* probes once, thread-safely; cheap after */
    if (unit && unit->backend && !tn__backends[TN_CUDA]) tn__backends[TN_CUDA] = unit->backend; /* the same value from any thread */
    return unit;
#else
    return NULL;
#endif
}
/* The unit when a GPU is usable, else NULL after recording why (fn names the caller). */
static const tn_cuda_unit *tn__cuda_ready(const char *fn) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (u && u->backend) return u;
    tn__error("%s: CUDA is not available: %s", fn, tn_cuda_unavailable_reason());
    return NULL;
}
TNDEF bool tn_cuda_is_available(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend; }
TNDEF const char *tn_cuda_unavailable_reason(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (!u) return "tensor.h was built without the GPU unit (define TENSOR_CUDA and link tensor_cuda.cu: make cuda)";
    return u->backend ? "" : u->reason ? u->reason : "no usable GPU";
}
TNDEF int tn_cuda_device_count(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->device_count() : 0; }
TNDEF int tn_cuda_set_device(int index) { const tn_cuda_unit *u = tn__cuda_ready("tn_cuda_set_device"); return u ? u->set_device(index) : -1; }
TNDEF int tn_cuda_current_device(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->current_device() : -1; }
TNDEF int tn_cuda_synchronize(void) { const tn_cuda_unit *u = tn__cuda_ready("tn_cuda_synchronize"); return u ? u->synchronize() : -1; }
TNDEF tn_cuda_stats tn_cuda_memory_stats(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    tn_cuda_stats s;
    if (u && u->backend) return u->memory_stats();
    memset(&s, 0, sizeof s);
    return s;
}
TNDEF void tn_cuda_reset_peak_memory_stats(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->reset_peak(); }
TNDEF void tn_cuda_empty_cache(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->empty_cache(); }
/* PyTorch's two TF32 switches and their defaults: matmul off (since 1.12), cuDNN on */
static bool tn__tf32, tn__cudnn_tf32 = true;
TNDEF void tn_set_tf32(bool allow) { tn__tf32 = allow; }
TNDEF bool tn_get_tf32(void) { return tn__tf32; }
TNDEF void tn_set_cudnn_tf32(bool allow) { tn__cudnn_tf32 = allow; }
TNDEF bool tn_get_cudnn_tf32(void) { return tn__cudnn_tf32; }

static void tn__pinned_free(void *data, void *ctx) { ((const tn_cuda_unit *)ctx)->host_free(data); }
TNDEF bool tn_is_pinned(const tn_tensor *t) { return t && t->storage && t->storage->deleter == tn__pinned_free; }
TNDEF tn_tensor *tn_pin_memory(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->device != TN_CPU) return (tn_tensor *)tn__error("tn_pin_memory: the tensor is on %s; only CPU tensors can be pinned", tn_device_name(t->device));
    const tn_cuda_unit *u = tn__cuda_ready("tn_pin_memory");
    if (!u) return NULL;
    size_t nb = (size_t)tn_numel(t) * tn_dtype_size(t->dtype);
    void *data = u->host_alloc(nb ? nb : 1);
    if (!data) return (tn_tensor *)tn__error("tn_pin_memory: cannot allocate %zu bytes of page-locked memory", nb);
    tn_storage *st = tn__foreign_storage(data, nb, tn__pinned_free, (void *)u);
    if (!st) { u->host_free(data); return (tn_tensor *)tn__error("tn_pin_memory: out of memory"); }
    int64_t strides[TN_MAX_DIMS];
    tn__contiguous_strides(t->shape, t->ndim, strides);
    tn_tensor *p = tn__tensor_over(st, t->dtype, t->shape, strides, t->ndim, 0);
    if (p && tn__copy(p, t)) { tn_release(p); return NULL; }
    return tn__own(p);
}
TNDEF tn_tensor *tn_to_non_blocking(tn_tensor *t, tn_device device) {
    TN__CHECK_NULL(t);
    const tn_cuda_unit *u = tn__cuda_unit();
    bool async = u && u->backend && device == TN_CUDA && tn_is_pinned(t);   /* an upload from page-locked memory */
    if (!async) return tn_to(t, device);
    tn_tensor *out = tn__new(t->dtype, device, t->shape, t->ndim);
    if (!out || u->copy_async(out, t) < 0) { tn_release(out); return NULL; }
    return tn__own(tn__copy_record(t, out, G_TO));
}
