/* fuzz_idx_gz — tn_read_idx of a .gz file whose decompressed contents are the input bytes:
 * the IDX parser fuzzed behind zlib, where the file's size is unknown ahead (the reader
 * grows its buffer as data arrives instead of trusting the header's sizes). */
#include "fuzz_common.h"
#include <zlib.h>

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    char path[512];
    fuzz_tmp_path("in.idx.gz", path, sizeof path);
    gzFile g = gzopen(path, "wb1");
    if (!g) return 0;
    int put = size ? gzwrite(g, data, (unsigned)size) : 0;
    if (gzclose(g) != Z_OK || put != (int)size) { unlink(path); return 0; }
    tn_clear_error();
    tn_tensor *t = tn_read_idx(path);
    unlink(path);
    fuzz_verbose("tn_read_idx (gzip)", !t);
    if (!t && !tn_last_error()[0]) FUZZ_FINDING("tn_read_idx returned NULL without an error message");
    fuzz_touch(t);
    tn_release(t);
    return 0;
}
