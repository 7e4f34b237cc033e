#!/bin/sh
# Puts a text corpus for examples/char_lm.c into data/fortunes.txt if missing: the fortune
# cookies of Debian's fortunes-min (installed, or fetched with apt-get download; no root).
set -eu
dst=data/fortunes.txt
[ -f "$dst" ] && exit 0
mkdir -p data
src=/usr/share/games/fortunes/fortunes
if [ ! -f "$src" ]; then
    echo "fetching Debian package fortunes-min ..."
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download fortunes-min >/dev/null 2>&1) || {
        echo "apt-get download failed: run 'apt-get update', or pass --text FILE to char_lm"; exit 1; }
    dpkg -x "$tmp"/fortunes-min_*.deb "$tmp/x"
    src="$tmp/x/usr/share/games/fortunes/fortunes"
fi
cp "$src" "$dst"
echo "text ready in $dst ($(wc -c < "$dst") bytes)"
