/* fuzz_idx — tn_read_idx of a file holding the input bytes (a plain IDX file, or, when the
 * bytes start with gzip's magic 1f 8b, a damaged or hostile gzip stream read through zlib).
 * Promises: a bad file is refused with an error, never overread, and never makes an
 * allocation much larger than the file (libFuzzer's -malloc_limit_mb catches those). */
#include "fuzz_common.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    char path[512];
    fuzz_tmp_path("in.idx", path, sizeof path);
    if (fuzz_write_file(path, data, size)) return 0;
    tn_clear_error();
    tn_tensor *t = tn_read_idx(path);
    unlink(path);
    fuzz_verbose("tn_read_idx", !t);
    if (!t && !tn_last_error()[0]) FUZZ_FINDING("tn_read_idx returned NULL without an error message");
    fuzz_touch(t);
    tn_release(t);
    return 0;
}
