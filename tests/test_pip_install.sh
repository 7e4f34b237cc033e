#!/bin/sh
# pip install ./bindings/python into a fresh venv, offline (--no-index) and with pip's build
# isolation (the package's backend, _build/tensor_build.py, takes the interpreter's
# setuptools instead of fetching it), then import the package from / and run a computation:
# the package carries its own library compiled from tensor.h, and finds it wherever it is
# installed. Then a wheel
# (pip wheel) tagged for this platform, installed into a second venv; and a venv without
# the wheel package gets setup.py's message, not setuptools' "invalid command". The
# library is compiled at -O0 ($CFLAGS, which setup.py honours): this checks packaging, not speed.
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-/usr/bin/python3}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
if ! "$PY" -m venv --system-site-packages "$d/venv" >/dev/null 2>&1 || ! "$d/venv/bin/python" -m pip --version >/dev/null 2>&1; then
    echo "pip install check skipped: no venv with pip for $PY (Debian: apt-get install python3-venv python3-pip)"
    echo "0 passed, 0 failed"; exit 0
fi
p=0; f=0
# a copy of the tree the way pip sees it (no build/ or lib/ to find by accident)
mkdir -p "$d/src/bindings" && cp tensor.h "$d/src/" && cp -r bindings/python "$d/src/bindings/"
rm -rf "$d/src/bindings/python/build" "$d/src/bindings/python/"*.egg-info
export CFLAGS=-O0
if "$d/venv/bin/python" -m pip install -q --no-index "$d/src/bindings/python" >"$d/pip.log" 2>&1; then
    p=$((p + 1))
else
    tail -n 30 "$d/pip.log"; echo "FAIL pip install"; f=$((f + 1))
fi
out=$(cd / && env -u TENSOR_LIB -u PYTHONPATH "$d/venv/bin/python" -c "
import tensor, os
x = tensor.arange(10.0)
print(tensor.__version__, float((x * x).sum()), os.path.dirname(tensor._C.path) == os.path.dirname(tensor.__file__))" 2>&1)
want="$(sed -n 's/^#define TENSOR_VERSION_STRING "\(.*\)"/\1/p' src/api.h) 285.0 True"
if [ "$out" = "$want" ]; then p=$((p + 1)); else echo "FAIL import from /: got '$out', expected '$want'"; f=$((f + 1)); fi
# the distribution's metadata carries the same version
v=$("$d/venv/bin/python" -m pip show tensor-dot-h 2>/dev/null | sed -n 's/^Version: //p')
if [ "$v" = "${want%% *}" ]; then p=$((p + 1)); else echo "FAIL pip show tensor-dot-h: version '$v'"; f=$((f + 1)); fi
# a C extension built against the installed package's own header and library, from /
out=$(cd / && env -u TENSOR_LIB -u PYTHONPATH TENSOR_EXTENSIONS_DIR="$d/ext" "$d/venv/bin/python" -c "
import tensor
from tensor.utils.cpp_extension import load_inline
m = load_inline('twice', c_sources='tn_tensor *twice(tn_tensor *x) { return tn_mul_scalar(x, 2); }')
print(float(m.twice(tensor.arange(4.0)).sum()))" 2>&1)
if [ "$out" = "12.0" ]; then p=$((p + 1)); else echo "FAIL load_inline from the installed package: got '$out'"; f=$((f + 1)); fi
# a wheel (--no-build-isolation, the documented offline route): it carries a compiled
# library, so it is tagged for this platform, not "any"
if "$d/venv/bin/python" -m pip wheel -q --no-build-isolation --no-index --no-deps -w "$d/wheels" "$d/src/bindings/python" >"$d/wheel.log" 2>&1; then
    whl=$(ls "$d/wheels"/*.whl 2>/dev/null)
    case $(basename "$whl") in
    tensor_dot_h-${want%% *}-py3-none-linux_*.whl) p=$((p + 1)) ;;
    *) echo "FAIL wheel name '$(basename "$whl")': expected tensor_dot_h-${want%% *}-py3-none-linux_<arch>.whl"; f=$((f + 1)) ;;
    esac
    # installed elsewhere, it brings its library with it
    if "$PY" -m venv --system-site-packages "$d/venv2" >/dev/null 2>&1 &&
       "$d/venv2/bin/python" -m pip install -q --no-index "$whl" >"$d/pip2.log" 2>&1; then
        out=$(cd / && env -u TENSOR_LIB -u PYTHONPATH "$d/venv2/bin/python" -c "
import tensor, os
print(float(tensor.arange(4.0).sum()), tensor._C.path.startswith('$d/venv2/'))" 2>&1)
        if [ "$out" = "6.0 True" ]; then p=$((p + 1)); else echo "FAIL the wheel installed in a second venv: got '$out'"; f=$((f + 1)); fi
    else
        tail -n 20 "$d/pip2.log"; echo "FAIL pip install of the wheel"; f=$((f + 1))
    fi
else
    tail -n 30 "$d/wheel.log"; echo "FAIL pip wheel"; f=$((f + 1))
fi
# a venv without system packages has setuptools but (before setuptools 70.1) not wheel:
# --no-build-isolation then says what to do
if "$PY" -m venv "$d/bare" >/dev/null 2>&1 && ! "$d/bare/bin/python" -c "import wheel" 2>/dev/null &&
   ! "$d/bare/bin/python" -c "import setuptools.command.bdist_wheel" 2>/dev/null; then
    if "$d/bare/bin/python" -m pip install --no-build-isolation --no-index "$d/src/bindings/python" >"$d/bare.log" 2>&1; then
        echo "FAIL pip install in a venv without wheel succeeded?"; f=$((f + 1))
    elif grep -q "tensor: building a wheel needs the 'wheel' package" "$d/bare.log"; then p=$((p + 1))
    else tail -n 15 "$d/bare.log"; echo "FAIL no clear message without the wheel package"; f=$((f + 1)); fi
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
