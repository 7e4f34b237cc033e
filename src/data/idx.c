/* ---- IDX ---- */
static uint32_t tn__be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

TNDEF tn_tensor *tn_read_idx(const char *path) {
    if (!path) return (tn_tensor *)tn__error("tn_read_idx: path is NULL");
    tn__file r;
    if (tn__file_open("tn_read_idx", path, &r)) return NULL;
    unsigned char h[4 + 4 * TN_MAX_DIMS];
    tn_tensor *t = NULL;
    char *raw = NULL;
    int64_t got = tn__file_read("tn_read_idx", path, &r, h, 4);
    int fsize = 0, ndim = 0;
    tn_dtype dtype = TN_U8;
    if (got < 0) goto done;
    if (got < 4) { tn__error("tn_read_idx: '%s' is too short (%lld bytes) for an IDX header", path, (long long)got); goto done; }
    if (h[0] || h[1]) {
        tn__error("tn_read_idx: '%s' is not an IDX file: bad magic %02x %02x %02x %02x (expected 00 00 <type> <ndim>)", path, h[0], h[1], h[2], h[3]);
        goto done;
    }
    switch (h[2]) {
    case 0x08: fsize = 1; dtype = TN_U8; break;
    case 0x09: fsize = 1; dtype = TN_I32; break;   /* int8: no such dtype here, widened */
    case 0x0B: fsize = 2; dtype = TN_I32; break;   /* int16: widened */
    case 0x0C: fsize = 4; dtype = TN_I32; break;
    case 0x0D: fsize = 4; dtype = TN_F32; break;
    case 0x0E: fsize = 8; dtype = TN_F64; break;
    default:
        tn__error("tn_read_idx: '%s': unknown IDX element type 0x%02x (expected 08 uint8, 09 int8, 0B int16, 0C int32, 0D float32 or 0E float64)", path, h[2]);
        goto done;
    }
    ndim = h[3];
    if (ndim > TN_MAX_DIMS) { tn__error("tn_read_idx: '%s' has %d dims; tensor.h supports at most %d", path, ndim, TN_MAX_DIMS); goto done; }
    got = tn__file_read("tn_read_idx", path, &r, h + 4, 4 * ndim);
    if (got < 0) goto done;
    if (got < 4 * ndim) { tn__error("tn_read_idx: '%s' is truncated inside its header (%d dims need %d bytes of sizes)", path, ndim, 4 * ndim); goto done; }
    {
        int64_t shape[TN_MAX_DIMS], numel = 1, nbytes;
        bool ok = true;
        for (int i = 0; i < ndim; i++) {
            shape[i] = (int64_t)tn__be32(h + 4 + 4 * i);
            ok = ok && tn__mul_ok(numel, shape[i], &numel);
        }
        if (!ok || !tn__mul_ok(numel, fsize, &nbytes) || numel > ((int64_t)1 << 60) / 8) {
            tn__error("tn_read_idx: '%s': dims %s have too many elements", path, tn__shape_str(shape, ndim));
            goto done;
        }
        int64_t left = tn__file_left(&r);
        if (left >= 0 && left != nbytes) {
            if (left < nbytes) tn__error("tn_read_idx: '%s' is truncated: the header (dims %s) promises %lld bytes of data, the file has %lld", path, tn__shape_str(shape, ndim), (long long)nbytes, (long long)left);
            else tn__error("tn_read_idx: '%s' has %lld bytes after the %lld bytes of data the header (dims %s) describes", path, (long long)(left - nbytes), (long long)nbytes, tn__shape_str(shape, ndim));
            goto done;
        }
        /* a plain file whose elements keep their size is read straight into the tensor and
           decoded in place (each element is read before it is written): MNIST's 47 MB of
           images are not held twice */
        const bool direct = left >= 0 && fsize == (int)tn_dtype_size(dtype);
        if (direct) {
            if (!(t = tn__new(dtype, TN_CPU, shape, ndim))) goto done;
            if (!tn__file_read_into("tn_read_idx", path, &r, nbytes, (char *)tn_data_ptr(t))) { tn_release(t); t = NULL; goto done; }
        } else {
            if (!(raw = tn__file_read_exact("tn_read_idx", path, &r, nbytes))) goto done;
            if (!(t = tn__new(dtype, TN_CPU, shape, ndim))) goto done;
        }
        void *out = tn_data_ptr(t);
        const unsigned char *p = direct ? (const unsigned char *)out : (const unsigned char *)raw;
        switch (h[2]) { /* big-endian, decoded bytewise: the host's byte order does not matter */
        case 0x08: if (numel && !direct) memcpy(out, p, (size_t)numel); break;
        case 0x09: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int8_t)p[i]; break;
        case 0x0B: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int16_t)(uint16_t)(p[2 * i] << 8 | p[2 * i + 1]); break;
        case 0x0C: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int32_t)tn__be32(p + 4 * i); break;
        case 0x0D: for (int64_t i = 0; i < numel; i++) { uint32_t u = tn__be32(p + 4 * i); memcpy((float *)out + i, &u, 4); } break;
        default:
            for (int64_t i = 0; i < numel; i++) {
                uint64_t u = (uint64_t)tn__be32(p + 8 * i) << 32 | tn__be32(p + 8 * i + 4);
                memcpy((double *)out + i, &u, 8);
            }
        }
    }
done:
    TN_FREE(raw);
    tn__file_close(&r);
    return tn__own(t);
}
