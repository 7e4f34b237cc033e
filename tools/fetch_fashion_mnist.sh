#!/bin/sh
# Puts Fashion-MNIST (uncompressed IDX files) into data/fashion-mnist/ if missing.
# Source, in order: $FASHION_MNIST, /usr/share/datasets/fashion-mnist (Debian's
# dataset-fashion-mnist), else that package fetched with apt-get download (no root needed).
set -eu
dst=data/fashion-mnist
files="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"
have=1; for f in $files; do [ -f "$dst/$f" ] || have=0; done
[ $have = 1 ] && exit 0
mkdir -p "$dst"
src=""
for d in "${FASHION_MNIST:-}" /usr/share/datasets/fashion-mnist; do
    [ -n "$d" ] && [ -f "$d/train-images-idx3-ubyte.gz" -o -f "$d/train-images-idx3-ubyte" ] && { src=$d; break; }
done
if [ -z "$src" ]; then
    echo "fetching Debian package dataset-fashion-mnist ..."
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null 2>&1) || {
        echo "apt-get download failed: run 'apt-get update' or set FASHION_MNIST=/path/to/idx-files"; exit 1; }
    dpkg -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/x"
    src="$tmp/x/usr/share/datasets/fashion-mnist"
fi
for f in $files; do
    if [ -f "$src/$f" ]; then cp "$src/$f" "$dst/$f"; else gzip -dc "$src/$f.gz" > "$dst/$f"; fi
done
echo "Fashion-MNIST ready in $dst"
