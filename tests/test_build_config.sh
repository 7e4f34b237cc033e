#!/bin/sh
# The build's switches (issue 24 item 1), read from the commands make would run (make -n):
# OpenMP by default, none with NO_OMP=1 or (with a note) when the compiler cannot build it;
# OpenBLAS chosen by itself where the built-in GEMM has no vector kernel (MACHINE=aarch64)
# and pkg-config finds it, never on x86-64. Then the header built with TENSOR_CBLAS against
# OpenBLAS multiplies right, and TENSOR_STATIC compiles warning-free with each compiler.
cd "$(dirname "$0")/.." || exit 1
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else echo "FAIL $1"; f=$((f + 1)); fi; }
# the commands for the library's object, from a make that does not inherit this run's flags
# (make exports command-line variables such as SANITIZE=1 to its recipes: unset too)
cmds() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u DIST -u BLAS -u NO_OMP -u MACHINE make -n -B --no-print-directory "$@" build/tensor_fast.o 2>&1; }
cmds > "$d/default"
check "OpenMP on by default" "grep -q -- '-fopenmp' '$d/default'"
cmds NO_OMP=1 > "$d/noomp"
check "NO_OMP=1: no -fopenmp" "! grep -q -- '-fopenmp' '$d/noomp' && grep -q -- '-o build/tensor_fast.o' '$d/noomp'"
# a compiler that refuses -fopenmp
printf '#!/bin/sh\nfor a in "$@"; do [ "$a" = -fopenmp ] && { echo "no OpenMP here" >&2; exit 1; }; done\nexec cc "$@"\n' > "$d/cc"
chmod +x "$d/cc"
cmds CC="$d/cc" > "$d/ccnoomp"
check "a compiler without OpenMP: a note and no -fopenmp" "grep -q 'cannot build OpenMP' '$d/ccnoomp' && ! grep -q -- '-fopenmp' '$d/ccnoomp'"
cmds MACHINE=x86_64 > "$d/x86"
check "x86-64: the built-in GEMM" "! grep -q -- '-DTENSOR_CBLAS' '$d/x86'"
cmds MACHINE=aarch64 > "$d/arm"
if pkg-config --exists openblas 2>/dev/null; then
    check "aarch64 with OpenBLAS: chosen by itself" "grep -q -- '-DTENSOR_CBLAS' '$d/arm'"
    cmds MACHINE=aarch64 BLAS=none > "$d/armnone"
    check "BLAS=none overrides the choice" "! grep -q -- '-DTENSOR_CBLAS' '$d/armnone'"
    # the cblas path computes what the built-in GEMM does (strided and transposed operands)
    cat > "$d/blas.c" <<'C'
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include <stdio.h>
int main(void) {
    tn_scope_begin();
    tn_manual_seed(1);
    tn_tensor *a = tn_randn(TN_SHAPE(37, 29), TN_F64), *b = tn_randn(TN_SHAPE(41, 29), TN_F64);
    tn_tensor *c = tn_matmul(a, tn_t(b));                   /* [37, 41] through cblas_dgemm */
    double worst = 0;
    for (int i = 0; i < 37; i++)
        for (int j = 0; j < 41; j++) {
            double s = 0;
            for (int k = 0; k < 29; k++) s += tn_item(tn_select(tn_select(a, 0, i), 0, k)) * tn_item(tn_select(tn_select(b, 0, j), 0, k));
            double e = s - tn_item(tn_select(tn_select(c, 0, i), 0, j));
            if (e < 0) e = -e;
            if (e > worst) worst = e;
        }
    tn_tensor *f = tn_matmul(tn_to_dtype(a, TN_F32), tn_t(tn_to_dtype(b, TN_F32)));
    double ef = tn_item(tn_amax(tn_abs(tn_sub(tn_to_dtype(f, TN_F64), c)), NULL, 0));
    printf("%g %g\n", worst, ef);
    int ok = worst < 1e-12 && ef < 1e-4;
    tn_scope_end();
    return ok ? 0 : 1;
}
C
    if cc -O0 -I. -DTENSOR_CBLAS $(pkg-config --cflags openblas) "$d/blas.c" -o "$d/blas" $(pkg-config --libs openblas) -lm -pthread 2>"$d/blas.err" &&
       nm "$d/blas" | grep -q 'U cblas_dgemm' && "$d/blas" >"$d/blas.out"; then p=$((p + 1))
    else cat "$d/blas.err" "$d/blas.out" 2>/dev/null; echo "FAIL TENSOR_CBLAS with OpenBLAS"; f=$((f + 1)); fi
else
    echo "OpenBLAS checks skipped: pkg-config finds no openblas (Debian: libopenblas-dev)"
    check "aarch64 without OpenBLAS: the built-in GEMM" "! grep -q -- '-DTENSOR_CBLAS' '$d/arm'"
fi
# TENSOR_STATIC: every function static, none unused-warned, with each compiler there is
printf '#define TENSOR_STATIC\n#define TENSOR_IMPLEMENTATION\n#include "tensor.h"\nint main(void){return 0;}\n' > "$d/static.c"
for c in gcc clang; do
    command -v $c >/dev/null || continue
    check "TENSOR_STATIC warning-free with $c" "$c -std=c11 -Wall -Wextra -Wunused -pedantic -Werror -fsyntax-only -I. '$d/static.c' 2>'$d/$c.err' || { cat '$d/$c.err'; false; }"
done
# A user's own build of the header with gcc's defaults (-std=gnu17: products contracted into
# adds) keeps the optimizers' steps bit for bit those of -std=c11 (torch's): the rules and
# their loops are no-contraction regions. The sanitizer run skips it (the same compile).
if [ "${SANITIZE:-}" != 1 ] && command -v gcc >/dev/null; then
    cat > "$d/optbits.c" <<'C'
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include <stdio.h>
#include <string.h>
/* AdamW (amsgrad), RMSprop (momentum) and Adamax, each with weight decay: the general update
   loop, 12 steps; a hash of the parameters' bits */
int main(void) {
    const char *kinds[3] = {"AdamW", "RMSprop", "Adamax"};
    const char *opts[3] = {"lr=0.01, weight_decay=0.3, amsgrad=True", "lr=0.01, momentum=0.9, weight_decay=0.1",
                           "lr=0.01, weight_decay=0.01"};
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 3; k++) {
        tn_scope_begin();
        tn_manual_seed(7);
        tn_tensor *p = tn_randn(TN_SHAPE(1003), TN_F32);
        tn_requires_grad_(p, true);
        tn_optim *o = tn_optim_create_str(kinds[k], &p, 1, opts[k]);
        for (int s = 0; s < 12; s++) {
            tn_set_grad(p, tn_randn(TN_SHAPE(1003), TN_F32));
            tn_optim_step(o);
        }
        const float *v = (const float *)tn_data_ptr(p);
        for (int i = 0; i < 1003; i++) { uint32_t u; memcpy(&u, v + i, 4); h = (h ^ u) * 1099511628211ull; }
        tn_optim_free(o);
        tn_scope_end();
    }
    printf("%016llx\n", (unsigned long long)h);
    return 0;
}
C
    if gcc -O3 -fno-math-errno -I. "$d/optbits.c" -o "$d/ob_gnu" -lm -pthread 2>"$d/ob.err" &&
       gcc -std=c11 -O0 -I. "$d/optbits.c" -o "$d/ob_c11" -lm -pthread 2>>"$d/ob.err"; then
        "$d/ob_gnu" > "$d/ob_gnu.out"; "$d/ob_c11" > "$d/ob_c11.out"
        check "optimizer steps: gcc -std=gnu17 -O3 gives -std=c11's bits" "cmp -s '$d/ob_gnu.out' '$d/ob_c11.out' && [ -s '$d/ob_c11.out' ] || { cat '$d/ob_gnu.out' '$d/ob_c11.out'; false; }"
    else cat "$d/ob.err"; echo "FAIL optimizer bits program did not build"; f=$((f + 1)); fi
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
