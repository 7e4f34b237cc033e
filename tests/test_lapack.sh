#!/bin/sh
# TENSOR_LAPACK (make lapack-check): the library and the linalg C tests built with
# LAPACK=openblas (build/lapack, lib/libtensor_lapack.so; -DTENSOR_LAPACK, the Fortran LAPACK
# of Debian's OpenBLAS), the LAPACK routines linked (nm), then the linalg C tests and the
# Python linalg tests against that library (TENSOR_TEST_LAPACK=1: test_lapack.py's bit-for-bit
# comparisons with torch, and the few built-in-only identities relaxed to rounding).
# Skipped (0 passed, 0 failed) where pkg-config finds no OpenBLAS (Debian: libopenblas-dev).
cd "$(dirname "$0")/.." || exit 1
if ! pkg-config --exists openblas 2>/dev/null; then
    echo "TENSOR_LAPACK checks skipped: pkg-config finds no openblas (apt-get install libopenblas-dev)"
    echo "0 passed, 0 failed"; exit 0
fi
PYTHON=${PYTHON:-/usr/bin/python3}
CTESTS="test_linalg test_linalg_more test_linalg_decomp test_linalg_eig test_linalg_complex test_ormqr_histogramdd"
PYTESTS="test_lapack.py test_linalg.py test_linalg_more.py test_linalg_decomp.py test_linalg_eig.py test_linalg_complex.py test_linalg_f32.py test_linalg_svd_fast.py test_lowrank_ormqr_histogramdd.py"
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; fi; }
log=$(mktemp); trap 'rm -f "$log"' EXIT
# always the plain build (SANITIZE= : make hands a command line's SANITIZE=1 down to this one)
if ! ${MAKE:-make} -s LAPACK=openblas SANITIZE= lib/libtensor_lapack.so $(for t in $CTESTS; do printf 'build/lapack/%s ' $t; done) >"$log" 2>&1; then
    tail -20 "$log"; echo "FAIL building with LAPACK=openblas"; echo "0 passed, 1 failed"; exit 1
fi
check "the library calls LAPACK (dgetrf_, zgesdd_, sgeev_ undefined in it)" \
    "nm -D lib/libtensor_lapack.so | grep -q ' U dgetrf_' && nm -D lib/libtensor_lapack.so | grep -q ' U zgesdd_' && nm -D lib/libtensor_lapack.so | grep -q ' U sgeev_'"
for t in $CTESTS; do
    out=$(timeout 600 ./build/lapack/$t 2>&1); rc=$?
    check "$t under TENSOR_LAPACK (exit $rc)" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || echo "$out" | grep FAIL | head -20
done
out=$(cd bindings/python && TENSOR_TEST_LAPACK=1 TENSOR_LIB="$PWD/../../lib/libtensor_lapack.so" timeout 900 "$PYTHON" -m pytest -q -p no:cacheprovider \
      $(for t in $PYTESTS; do printf 'tests/%s ' $t; done) 2>&1); rc=$?
check "the Python linalg tests under TENSOR_LAPACK (exit $rc)" '[ $rc -eq 0 ] || [ $rc -eq 5 ]'
echo "$out" | tail -1
[ $rc -eq 0 ] || [ $rc -eq 5 ] || echo "$out" | grep -E "^(FAILED|ERROR)" | head -20
echo "$p passed, $f failed"
[ $f -eq 0 ]
