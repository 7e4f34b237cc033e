/* test_kwargs.c — keyword arguments: the struct form (tn_nn_conv2d(1, 32, 3, .padding = 1))
 * and the option text (tn_nn_conv2d_str(1, 32, 3, "padding=1")) build the same thing, with
 * PyTorch's defaults for every name left out; the text parser takes PyTorch's syntax of any
 * length and refuses what it cannot read with a message naming the option. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* Both modules exist and print the same (PyTorch's repr) with the same parameter shapes. */
static void same_module(tn_module *a, tn_module *b, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: %s (error: %s)", what, a ? "text form failed" : "struct form failed", tn_last_error()); tn_module_free(a); tn_module_free(b); return; }
    char *ra = tn_module_repr(a), *rb = tn_module_repr(b);
    if (strcmp(ra, rb)) fail_at(line, "%s: struct form %s, text form %s", what, ra, rb);
    else tn_test_passed++;
    tn_string_free(ra);
    tn_string_free(rb);
    tn_dict *pa = tn_module_state_dict(a), *pb = tn_module_state_dict(b);
    bool shapes = tn_dict_len(pa) == tn_dict_len(pb);
    for (int i = 0; shapes && i < tn_dict_len(pa); i++) {
        tn_tensor *x = tn_dict_value(pa, i), *y = tn_dict_get(pb, tn_dict_key(pa, i));
        shapes = y && tn_ndim(x) == tn_ndim(y) && !memcmp(tn_shape(x), tn_shape(y), sizeof(int64_t) * (size_t)tn_ndim(x));
    }
    if (!shapes) fail_at(line, "%s: the state dicts differ in names or shapes", what);
    else tn_test_passed++;
    tn_dict_free(pa);
    tn_dict_free(pb);
    tn_module_free(a);
    tn_module_free(b);
}
#define SAME(a, b) same_module((a), (b), #a, __LINE__)

TEST(conv_struct_and_text_agree) {
    SAME(tn_nn_conv2d(1, 32, 3), tn_nn_conv2d_str(1, 32, 3, NULL));
    SAME(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_conv2d_str(1, 32, 3, "padding=1"));
    SAME(tn_nn_conv2d(2, 4, 3, .kernel_size_hw = {3, 5}, .stride = 2, .padding_hw = {1, 2}, .dilation = 2, .groups = 2),
         tn_nn_conv2d_str(2, 4, 3, "kernel_size=(3, 5), stride=2, padding=(1, 2), dilation=2, groups=2"));
    SAME(tn_nn_conv2d(3, 8, 3, .padding = TN_PADDING_SAME, .dilation = 2, .bias = false),
         tn_nn_conv2d_str(3, 8, 3, "padding='same', dilation=2, bias=False"));
    SAME(tn_nn_conv2d(3, 8, 3, .padding = TN_PADDING_VALID), tn_nn_conv2d_str(3, 8, 3, "padding=\"valid\""));
    SAME(tn_nn_conv1d(2, 4, 3, .stride = 2, .padding = 1, .dilation = 2), tn_nn_conv1d_str(2, 4, 3, "stride=2, padding=1, dilation=2"));
    SAME(tn_nn_conv_transpose2d(4, 2, 3, .stride = 2, .padding = 1, .output_padding = 1),
         tn_nn_conv_transpose2d_str(4, 2, 3, "stride=2, padding=1, output_padding=1"));
    SAME(tn_nn_conv_transpose2d(4, 2, 3, .stride_hw = {2, 1}, .output_padding_hw = {1, 0}),
         tn_nn_conv_transpose2d_str(4, 2, 3, "stride=(2, 1), output_padding=(1, 0)"));
    /* names in any order, defaults restated, spaces and brackets as Python allows */
    SAME(tn_nn_conv2d(2, 4, 3, .bias = true, .groups = 2, .stride_hw = {2, 1}, .padding_mode = TN_PADDING_ZEROS),
         tn_nn_conv2d_str(2, 4, 3, "  groups = 2 ,stride=[2, 1],bias=True, padding_mode='zeros' "));
    /* the struct from TN_DEFAULTS, filled by hand, as C++ or generated code would */
    tn_conv_opts o = TN_DEFAULTS(tn_conv_opts);
    CHECK(o.stride == 1 && o.padding == 0 && o.dilation == 1 && o.groups == 1 && o.bias && o.padding_mode == TN_PADDING_ZEROS);
    CHECK(o.kernel_size_hw[0] == 0 && o.stride_hw[1] == 0);
    o.padding = 2;
    o.bias = false;
    SAME(tn_nn_conv2d_opts(1, 2, 5, o), tn_nn_conv2d_str(1, 2, 5, "padding=2, bias=False"));
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(kwargs_text_errors) {
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "pading=1"), "tn_nn_conv2d: unknown option 'pading' (valid: stride, padding,");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride"), "tn_nn_conv2d: option text \"stride\": expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride="), "expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "=2"), "expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1, stride=2"), "tn_nn_conv2d: option 'stride' given twice");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=2x"), "tn_nn_conv2d: option stride=2x is not a number");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1e300"), "tn_nn_conv2d: option stride=1e+300: expected an integer");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=nan"), "expected an integer");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=(1, 2, 3)"), "tn_nn_conv2d: option stride=(1, 2, 3): expected at most 2 values");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=()"), "is not a number or a tuple of numbers");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "groups=(1, 2)"), "tn_nn_conv2d: option groups=(1, 2): expected at most 1 value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "bias=maybe"), "tn_nn_conv2d: option bias=maybe: expected True or False");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "padding_mode='mirror'"), "option padding_mode='mirror': expected one of zeros|reflect|replicate|circular");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "padding=same'"), "expected an int, a tuple, 'same' or 'valid'");
    /* no fixed buffers: a long name or value is read whole (and refused here for what it says) */
    char *text = (char *)malloc(20000);
    memset(text, 'x', 19990);
    memcpy(text + 19990, "=1", 3);
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, text), "tn_nn_conv2d: unknown option 'xxxx");
    memcpy(text, "stride=", 7);
    memset(text + 7, '0', 19000);
    memcpy(text + 19007, "2", 2);   /* stride=000...0002 */
    tn_module *m = tn_nn_conv2d_str(1, 2, 3, text);
    CHECK_MSG(m != NULL, "a long number: %s", tn_last_error());
    tn_module_free(m);
    free(text);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

int main(void) {
    RUN(conv_struct_and_text_agree);
    RUN(kwargs_text_errors);
    return tn_test_report();
}
