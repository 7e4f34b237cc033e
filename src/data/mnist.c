/* ---- MNIST ---- */
typedef struct tn__mnist_ds { tn_dataset base; tn_tensor *images, *labels; } tn__mnist_ds;  /* u8 [N, H, W], i64 [N] */
static int64_t tn__mnist_len(tn_dataset *d) { return ((tn__mnist_ds *)d)->images->shape[0]; }
static int tn__mnist_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__mnist_ds *m = (tn__mnist_ds *)d;
    int64_t h = m->images->shape[1], w = m->images->shape[2], shape[3] = {1, h, w};
    tn_scope_begin();
    tn_tensor *img = tn_empty(shape, 3, TN_F32), *lab = tn_select(m->labels, 0, i);
    if (img && lab) {
        const uint8_t *src = (const uint8_t *)tn_data_ptr(m->images) + i * h * w;
        float *dst = (float *)tn_data_ptr(img);
        for (int64_t j = 0; j < h * w; j++) dst[j] = (float)src[j] / 255.0f;  /* ToTensor's x / 255 */
        items[0] = tn_keep(img);
        items[1] = tn_keep(lab);
    }
    tn_scope_end();
    return img && lab ? 0 : -1;
}
static void tn__mnist_destroy(tn_dataset *d) {
    tn__mnist_ds *m = (tn__mnist_ds *)d;
    tn_release(m->images);
    tn_release(m->labels);
    TN_FREE(m);
}
/* dir/name, or dir/name.gz when only that exists. */
static tn_tensor *tn__mnist_file(const char *dir, const char *name) {
    tn__sbuf path = {NULL, 0, 0, 0};   /* any length of dir */
    tn__sb_printf(&path, "%s/%s", dir, name);
    FILE *f = path.failed ? NULL : fopen(path.s, "rb");
    if (!f && !path.failed) {
        tn__sb_puts(&path, ".gz");
        f = path.failed ? NULL : fopen(path.s, "rb");
    }
    tn_tensor *r = NULL;
    if (path.failed) tn__error("tn_mnist_dataset: out of memory");
    else if (!f) tn__error("tn_mnist_dataset: no %s/%s or %s.gz (Fashion-MNIST: sh tools/fetch_fashion_mnist.sh)", dir, name, name);
    else {
        fclose(f);
        r = TN__AS("tn_mnist_dataset", tn_read_idx(path.s));
    }
    TN_FREE(path.s);
    return r;
}
TNDEF tn_dataset *tn_mnist_dataset_opts(const char *dir, tn_mnist_opts o) {
    const bool train = o.train;
    if (!dir) return (tn_dataset *)tn__error("tn_mnist_dataset: dir is NULL");
    const char *split = train ? "train" : "t10k";
    char name[64];
    tn_dataset *ds = NULL;
    tn_scope_begin();
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    tn_tensor *img = tn__mnist_file(dir, name);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    tn_tensor *lab = img ? tn__mnist_file(dir, name) : NULL;
    if (lab) {
        if (img->dtype != TN_U8 || img->ndim != 3 || lab->dtype != TN_U8 || lab->ndim != 1 || lab->shape[0] != img->shape[0])
            tn__error("tn_mnist_dataset: %s: expected uint8 images [N, H, W] and uint8 labels [N], got %s images %s and %s labels %s", dir,
                      tn_dtype_name(img->dtype), TN__SHAPE(img), tn_dtype_name(lab->dtype), TN__SHAPE(lab));
        else {
            tn__mnist_ds *m = (tn__mnist_ds *)TN_MALLOC(sizeof *m);
            tn_tensor *lab64 = TN__AS("tn_mnist_dataset", tn_to_dtype(lab, TN_I64));
            if (!m) tn__error("tn_mnist_dataset: out of memory");
            if (m && lab64) {
                memset(m, 0, sizeof *m);
                m->base.len = tn__mnist_len;
                m->base.get = tn__mnist_get;
                m->base.destroy = tn__mnist_destroy;
                m->base.nitems = 2;
                m->images = tn_retain(img);
                m->labels = tn_retain(lab64);
                ds = &m->base;
            } else TN_FREE(m);
        }
    }
    tn_scope_end();
    return ds;
}
TNDEF tn_dataset *tn_mnist_dataset_str(const char *dir, const char *options) {
    TN__KW_STR(tn_mnist_opts, mnist, "tn_mnist_dataset", options, tn_mnist_dataset_opts(dir, o));
}
