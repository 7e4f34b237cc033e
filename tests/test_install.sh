#!/bin/sh
# make install into a scratch prefix, then programs built the three ways a C user would:
# pkg-config with the shared library, pkg-config --static, and a CMake project with
# find_package(tensor) -> tensor::tensor. Each must build, run and print the right sum.
cd "$(dirname "$0")/.." || exit 1
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
p=0; f=0
ok() { p=$((p + 1)); }
bad() { f=$((f + 1)); echo "FAIL $1"; }
if ! make --no-print-directory -s install PREFIX="$d/prefix" >"$d/install.log" 2>&1; then
    cat "$d/install.log"; echo "0 passed, 1 failed"; exit 1
fi
for x in include/tensor.h lib/libtensor.a lib/pkgconfig/tensor.pc lib/cmake/tensor/tensorConfig.cmake; do
    if [ -f "$d/prefix/$x" ]; then ok; else bad "installed $x"; fi
done
# the SONAME a program records is the major version's name, which the install provides
if readelf -d "$d/prefix/lib/libtensor.so" 2>/dev/null | grep -q 'SONAME.*libtensor.so.0'; then ok; else bad "SONAME libtensor.so.0"; fi
[ -e "$d/prefix/lib/libtensor.so.0" ] && ok || bad "libtensor.so.0 link"
# the licence travels in the header
grep -q 'Permission is hereby granted' "$d/prefix/include/tensor.h" && ok || bad "licence text in the installed tensor.h"
cat > "$d/main.c" <<'C'
#include <tensor.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    tn_scope_begin();
    tn_tensor *a = tn_arange(0, 10, 1, TN_F32);
    printf("%g %s\n", tn_item(tn_sum(tn_mul(a, a))), tn_library_version());
    int ok = tn_item(tn_sum(tn_mul(a, a))) == 285 && !strcmp(tn_library_version(), TENSOR_VERSION_STRING);
    tn_scope_end();
    return ok ? 0 : 1;
}
C
export PKG_CONFIG_PATH="$d/prefix/lib/pkgconfig"
if cc "$d/main.c" $(pkg-config --cflags --libs tensor) -o "$d/shared" 2>"$d/err" && LD_LIBRARY_PATH="$d/prefix/lib" "$d/shared"; then ok; else cat "$d/err"; bad "pkg-config, shared"; fi
# static: the archive in place of -ltensor, with the libraries it needs (Libs.private)
if cc "$d/main.c" $(pkg-config --static --cflags --libs tensor | sed 's/-ltensor/-l:libtensor.a/') -o "$d/static" 2>"$d/err" && "$d/static"; then
    ok; if ldd "$d/static" 2>/dev/null | grep -q libtensor; then bad "static program needs no libtensor.so"; else ok; fi
else cat "$d/err"; bad "pkg-config --static"; fi
if command -v cmake >/dev/null; then
    mkdir -p "$d/cm"
    cp "$d/main.c" "$d/cm/main.c"
    cat > "$d/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
project(app C)
find_package(tensor 0.2 REQUIRED)
add_executable(app main.c)
target_link_libraries(app PRIVATE tensor::tensor)
add_executable(app_static main.c)
target_link_libraries(app_static PRIVATE tensor::tensor_static)
CM
    if cmake -S "$d/cm" -B "$d/cm/build" -DCMAKE_PREFIX_PATH="$d/prefix" >"$d/cm.log" 2>&1 && cmake --build "$d/cm/build" >>"$d/cm.log" 2>&1 &&
       "$d/cm/build/app" && "$d/cm/build/app_static"; then ok; else cat "$d/cm.log"; bad "CMake find_package(tensor)"; fi
    # a version it cannot satisfy is refused
    sed -i 's/find_package(tensor 0.2 REQUIRED)/find_package(tensor 1.0 REQUIRED)/' "$d/cm/CMakeLists.txt"
    if cmake -S "$d/cm" -B "$d/cm/build2" -DCMAKE_PREFIX_PATH="$d/prefix" >/dev/null 2>&1; then bad "find_package(tensor 1.0) refused"; else ok; fi
else
    echo "cmake checks skipped: no cmake"
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
