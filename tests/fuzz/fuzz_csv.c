/* fuzz_csv — tn_read_csv_str: the input is "<options>\0<file contents>" (no NUL: the default
 * options and all of it as the file). Both the option text and the file are fuzzed; the
 * labels are asked for. A loaded matrix must have every element readable and labels, when
 * there are any, one per row. */
#include "fuzz_common.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    const uint8_t *nul = size ? (const uint8_t *)memchr(data, 0, size) : NULL;
    char *options = nul ? fuzz_cstr(data, (size_t)(nul - data)) : NULL;
    const uint8_t *body = nul ? nul + 1 : data;
    size_t n = nul ? size - (size_t)(nul + 1 - data) : size;
    char path[512];
    fuzz_tmp_path("in.csv", path, sizeof path);
    if (fuzz_write_file(path, body, n)) { free(options); return 0; }
    tn_clear_error();
    tn_tensor *labels = NULL;
    tn_tensor *x = tn_read_csv_str(path, &labels, options);
    unlink(path);
    fuzz_verbose("tn_read_csv", !x);
    if (!x) {
        if (!tn_last_error()[0]) FUZZ_FINDING("tn_read_csv returned NULL without an error message");
        if (labels) FUZZ_FINDING("tn_read_csv failed but wrote labels");
    } else {
        if (tn_ndim(x) != 2) FUZZ_FINDING("tn_read_csv returned %d dims", tn_ndim(x));
        if (labels && (tn_ndim(labels) != 1 || tn_shape(labels)[0] != tn_shape(x)[0]))
            FUZZ_FINDING("tn_read_csv: %lld labels for %lld rows", (long long)tn_numel(labels), (long long)tn_shape(x)[0]);
        fuzz_touch(x);
        fuzz_touch(labels);
    }
    tn_release(labels);
    tn_release(x);
    free(options);
    return 0;
}
