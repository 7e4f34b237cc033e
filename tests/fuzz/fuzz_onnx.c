/* fuzz_onnx — tn_onnx_load_buffer over arbitrary bytes (an ONNX model: protobuf).
 *
 * Promises checked: damaged or hostile bytes are refused with an error, never read outside
 * [data, data + size) (every protobuf length is checked against the bytes left); a buffer
 * that loads is a graph that prints, saves to the graph format and loads back from it with
 * the same printout. Loading runs the model once on zero inputs of its declared shapes (its
 * shape inference), so a model may legitimately ask for as much memory as its inputs
 * declare: run.sh gives this harness the option harness's allocation limit. */
#include "fuzz_common.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size) {
    tn_clear_error();
    tn_graph *g = tn_onnx_load_buffer(data, size);
    fuzz_verbose("tn_onnx_load_buffer", !g);
    if (!g) {
        if (!tn_last_error()[0]) FUZZ_FINDING("tn_onnx_load_buffer returned NULL without an error message");
        return 0;
    }
    char *s = tn_graph_str(g);
    if (!s) FUZZ_FINDING("a loaded ONNX graph cannot be printed: %s", tn_last_error());
    char path[256];
    fuzz_tmp_path("onnx.tng", path, sizeof path);
    if (tn_graph_save(g, path) == 0) {   /* names the graph format cannot hold are refused, not a finding */
        tn_graph *h = tn_graph_load(path);
        if (!h) FUZZ_FINDING("the graph format refuses its own save of a loaded ONNX graph: %s", tn_last_error());
        char *t = tn_graph_str(h);
        if (!t || strcmp(s, t)) FUZZ_FINDING("save -> load of a loaded ONNX graph changed it");
        tn_string_free(t);
        tn_graph_free(h);
    }
    unlink(path);
    tn_string_free(s);
    tn_graph_free(g);
    return 0;
}
