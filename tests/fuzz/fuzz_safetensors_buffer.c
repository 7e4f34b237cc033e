/* fuzz_safetensors_buffer — tn_safetensors_load_buffer over arbitrary bytes.
 *
 * Promises checked: a damaged or hostile buffer is refused with an error, never read
 * outside [data, data + size) (ASan: the input is libFuzzer's exactly-sized copy); a buffer
 * that loads holds tensors whose every element can be read; what loads survives a round
 * trip (tn_safetensors_serialize, then load_buffer again: the same names, dtypes, shapes,
 * bytes and metadata: nothing silently truncated or reinterpreted). */
#include "fuzz_common.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    tn_clear_error();
    tn_dict *d = tn_safetensors_load_buffer(data, size);
    fuzz_verbose("tn_safetensors_load_buffer", !d);
    if (!d) {
        if (!tn_last_error()[0]) FUZZ_FINDING("tn_safetensors_load_buffer returned NULL without an error message");
        return 0;
    }
    for (int i = 0; i < tn_dict_len(d); i++) {
        if (!tn_dict_key(d, i) || !tn_dict_value(d, i)) FUZZ_FINDING("entry %d of a loaded dict has no key or no tensor", i);
        fuzz_touch(tn_dict_value(d, i));
    }
    size_t n = 0;
    char *bytes = tn_safetensors_serialize(d, &n);
    if (!bytes) FUZZ_FINDING("a loaded dict cannot be serialized again: %s", tn_last_error());
    tn_dict *e = tn_safetensors_load_buffer(bytes, n);
    if (!e) FUZZ_FINDING("the library refuses its own serialization of a loaded dict: %s", tn_last_error());
    char why[300];
    if (fuzz_dict_diff(d, e, why, sizeof why) || fuzz_dict_diff(e, d, why, sizeof why))
        FUZZ_FINDING("load -> serialize -> load changed the contents: %s", why);
    tn_string_free(bytes);
    tn_dict_free(e);
    tn_dict_free(d);
    return 0;
}
