/* test_dlpack.c — tn_to_dlpack / tn_from_dlpack: the same memory both ways, the exporting
 * tensor kept alive exactly as long as the consumer holds it, strides and offsets kept,
 * every dtype mapped, and a producer's memory given back on every error path. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

static int freed;
static void producer_deleter(DLManagedTensor *m) { freed++; free(m->dl_tensor.shape); free(m->dl_tensor.strides); free(m->dl_tensor.data); free(m); }
/* A foreign producer's DLManagedTensor: n floats 0, 1, ..., shaped [rows, cols] with strides. */
static DLManagedTensor *foreign(int64_t rows, int64_t cols, int64_t rs, int64_t cs, DLDataType dt, int devtype) {
    DLManagedTensor *m = (DLManagedTensor *)calloc(1, sizeof *m);
    int64_t n = (rows - 1) * rs + (cols - 1) * cs + 1;
    float *data = (float *)malloc((size_t)(n + 4) * sizeof(float));
    for (int64_t i = 0; i < n + 4; i++) data[i] = (float)i;
    m->dl_tensor.data = data;
    m->dl_tensor.byte_offset = 4 * sizeof(float);   /* the tensor starts 4 elements in */
    m->dl_tensor.device.device_type = (DLDeviceType)devtype;
    m->dl_tensor.ndim = 2;
    m->dl_tensor.dtype = dt;
    m->dl_tensor.shape = (int64_t *)malloc(2 * sizeof(int64_t));
    m->dl_tensor.strides = (int64_t *)malloc(2 * sizeof(int64_t));
    m->dl_tensor.shape[0] = rows; m->dl_tensor.shape[1] = cols;
    m->dl_tensor.strides[0] = rs; m->dl_tensor.strides[1] = cs;
    m->deleter = producer_deleter;
    return m;
}

TEST(dlpack_export) {
    tn_scope_begin();
    tn_tensor *t = tn_keep(tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4)));
    tn_tensor *v = tn_keep(tn_narrow(tn_t(t), 1, 1, 2));   /* [4, 2], strides (1, 4), offset 4: v[i, j] = t[1 + j, i] */
    tn_scope_end();
    DLManagedTensor *m = tn_to_dlpack(v);
    CHECK(m && m->dl_tensor.data == tn_data_ptr(v) && m->dl_tensor.byte_offset == 0);
    CHECK(m && m->dl_tensor.ndim == 2 && m->dl_tensor.shape[0] == 4 && m->dl_tensor.shape[1] == 2);
    CHECK(m && m->dl_tensor.strides[0] == 1 && m->dl_tensor.strides[1] == 4);
    CHECK(m && m->dl_tensor.dtype.code == kDLFloat && m->dl_tensor.dtype.bits == 32 && m->dl_tensor.dtype.lanes == 1);
    CHECK(m && m->dl_tensor.device.device_type == kDLCPU);
    const int64_t live = tn_memory_stats_get().live_tensors;
    tn_release(v);
    tn_release(t);
    CHECK(tn_memory_stats_get().live_tensors == live - 1);   /* the export keeps v (and its storage) */
    CHECK(m && ((float *)m->dl_tensor.data)[1] == 5 && ((float *)m->dl_tensor.data)[4] == 8);   /* v[1, 0] = t[1, 1], v[0, 1] = t[2, 0] */
    tn_dlpack_delete(m);
    CHECK(tn_memory_stats_get().live_tensors == 0 && tn_memory_stats_get().live_storages == 0);
    /* dtypes */
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL};
    const int codes[] = {kDLFloat, kDLFloat, kDLInt, kDLInt, kDLUInt, kDLBool};
    for (int i = 0; i < 6; i++) {
        tn_tensor *z = tn_zeros(TN_SHAPE(2), dts[i]);
        DLManagedTensor *mz = tn_to_dlpack(z);
        CHECK_MSG(mz && mz->dl_tensor.dtype.code == codes[i] && mz->dl_tensor.dtype.bits == 8 * tn_dtype_size(dts[i]), "dtype %s", tn_dtype_name(dts[i]));
        tn_tensor *back = tn_from_dlpack(mz);   /* our own capsule comes back as the same memory */
        CHECK_MSG(back && tn_get_dtype(back) == dts[i] && tn_data_ptr(back) == tn_data_ptr(z), "round trip %s", tn_dtype_name(dts[i]));
        tn_release(z);
        tn_release(back);
    }
    CHECK(tn_memory_stats_get().live_tensors == 0 && tn_memory_stats_get().live_storages == 0);
    tn_tensor *g = tn_ones(TN_SHAPE(2), TN_F32);
    tn_requires_grad_(g, true);
    CHECK_ERR(tn_to_dlpack(g), "tn_to_dlpack: can't export a tensor that requires grad");
    tn_release(g);
    CHECK_ERR(tn_to_dlpack(NULL), "");
}

TEST(dlpack_import) {
    const DLDataType f32 = {kDLFloat, 32, 1};
    freed = 0;
    DLManagedTensor *m = foreign(3, 2, 1, 3, f32, kDLCPU);   /* a transposed [2, 3] view */
    void *data = m->dl_tensor.data;
    tn_tensor *t = tn_from_dlpack(m);
    CHECK(t && tn_data_ptr(t) == (char *)data + 4 * sizeof(float));
    CHECK(t && tn_strides(t)[0] == 1 && tn_strides(t)[1] == 3);
    tn_scope_begin();
    CHECK(t && tn_item(tn_select(tn_select(t, 0, 2), 0, 1)) == 4 + 2 + 3);
    CHECK(t && tn_item(tn_sum(t)) == 6 * 4 + (0 + 1 + 2 + 3 + 4 + 5));
    tn_scope_end();
    tn_tensor *view = tn_t(t);
    tn_release(t);
    CHECK(freed == 0);                       /* a view still uses the memory */
    tn_release(view);
    CHECK(freed == 1);
    /* errors give the producer's memory back, exactly once */
    const DLDataType u16 = {kDLUInt, 16, 1}, f32x4 = {kDLFloat, 32, 4};
    CHECK_ERR(tn_from_dlpack(foreign(2, 2, 2, 1, u16, kDLCPU)), "a dtype this library does not have");
    CHECK_ERR(tn_from_dlpack(foreign(2, 2, 2, 1, f32x4, kDLCPU)), "4 lanes");
    CHECK_ERR(tn_from_dlpack(foreign(2, 2, 2, 1, f32, kDLVulkan)), "a device this library cannot reach");
    CHECK_ERR(tn_from_dlpack(foreign(2, 2, -1, 1, f32, kDLCPU)), "negative stride");
    CHECK(freed == 5);
    DLManagedTensor *noshape = foreign(2, 2, 2, 1, f32, kDLCPU);
    free(noshape->dl_tensor.strides);
    noshape->dl_tensor.strides = NULL;       /* NULL strides: contiguous */
    t = tn_from_dlpack(noshape);
    tn_scope_begin();
    CHECK(t && tn_is_contiguous(t) && tn_item(tn_select(tn_select(t, 0, 1), 0, 1)) == 4 + 3);
    tn_scope_end();
    tn_release(t);
    CHECK(freed == 6);
    CHECK_ERR(tn_from_dlpack(NULL), "tn_from_dlpack: the DLManagedTensor is NULL");
    CHECK(tn_memory_stats_get().live_tensors == 0 && tn_memory_stats_get().live_storages == 0);
}

int main(void) {
    RUN(dlpack_export);
    RUN(dlpack_import);
    return tn_test_report();
}
