/* fuzz_safetensors_file — tn_safetensors_load of a file holding the input bytes.
 *
 * The file reader memory-maps the file (tensors alias the mapping, which must outlive the
 * dict while a tensor does): every element of every tensor is read, once with the dict
 * alive and once, for one tensor, after the dict is freed. What loads is saved with
 * tn_safetensors_save and loaded again: the same contents (the writer's side of the
 * round trip, through a temporary file renamed into place). */
#include "fuzz_common.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    char path[512], path2[512];
    fuzz_tmp_path("in.safetensors", path, sizeof path);
    fuzz_tmp_path("out.safetensors", path2, sizeof path2);
    if (fuzz_write_file(path, data, size)) return 0;
    tn_clear_error();
    tn_dict *d = tn_safetensors_load(path);
    fuzz_verbose("tn_safetensors_load", !d);
    if (!d) {
        if (!tn_last_error()[0]) FUZZ_FINDING("tn_safetensors_load returned NULL without an error message");
        unlink(path);
        return 0;
    }
    for (int i = 0; i < tn_dict_len(d); i++) fuzz_touch(tn_dict_value(d, i));
    if (tn_safetensors_save(path2, d)) FUZZ_FINDING("a loaded dict cannot be saved again: %s", tn_last_error());
    tn_dict *e = tn_safetensors_load(path2);
    if (!e) FUZZ_FINDING("the library refuses its own save of a loaded dict: %s", tn_last_error());
    char why[300];
    if (fuzz_dict_diff(d, e, why, sizeof why) || fuzz_dict_diff(e, d, why, sizeof why))
        FUZZ_FINDING("load -> save -> load changed the contents: %s", why);
    tn_dict_free(e);
    /* one tensor outlives its dict (and the file: the mapping stays valid) */
    tn_tensor *keep = tn_dict_len(d) ? tn_retain(tn_dict_value(d, tn_dict_len(d) - 1)) : NULL;
    tn_dict_free(d);
    unlink(path);
    fuzz_touch(keep);
    tn_release(keep);
    unlink(path2);
    return 0;
}
