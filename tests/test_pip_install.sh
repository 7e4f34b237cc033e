#!/bin/sh
# pip install ./bindings/python into a fresh venv, offline (--no-build-isolation: the system's
# setuptools), then import the package from / and run a computation: the package carries
# its own library compiled from tensor.h, and finds it wherever it is installed.
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
if "$d/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$d/src/bindings/python" >"$d/pip.log" 2>&1; then
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
echo "$p passed, $f failed"
[ $f -eq 0 ]
