#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdio.h>
#include <string.h>

/* Issue 24 item 1: the version macros, the string and tn_library_version() agree. */
TEST(version_macros) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", TENSOR_VERSION_MAJOR, TENSOR_VERSION_MINOR, TENSOR_VERSION_PATCH);
    CHECK(strcmp(want, TENSOR_VERSION_STRING) == 0);
    CHECK(strcmp(tn_library_version(), TENSOR_VERSION_STRING) == 0);
    CHECK(TENSOR_VERSION_MAJOR >= 0 && TENSOR_VERSION_MINOR >= 0 && TENSOR_VERSION_PATCH >= 0);
    /* usable in #if, as a C library's version macros are */
#if TENSOR_VERSION_MAJOR * 10000 + TENSOR_VERSION_MINOR * 100 + TENSOR_VERSION_PATCH >= 200
    CHECK(1);
#else
    CHECK(!"version below 0.2.0");
#endif
}

int main(void) {
    RUN(version_macros);
    return tn_test_report();
}
