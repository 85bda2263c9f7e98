#!/bin/sh
# Installs weir from this folder under PREFIX (default /usr/local):
#   PREFIX/bin/weir, unweir and weircat (links: weir acts by its name),
#   the manual page and the bash, zsh and fish completions under PREFIX/share.
# Run-time needs: libzstd1 (1.5.4 or later), libjemalloc2 and the other
# formats' libdeflate0, libisal2, zlib1g, liblz4-1 and liblzma5, libxxhash0,
# libfuse3-3 (weir mount), libcurl4 (URLs as inputs, its OpenSSL flavour),
# with glibc, libstdc++6 and libgcc-s1. No Swift is needed. On Debian and Ubuntu:
#   apt-get install libzstd1 libjemalloc2 libdeflate0 libisal2 zlib1g liblz4-1 liblzma5 libxxhash0 libfuse3-3 libcurl4
#   ./install.sh [PREFIX]
# Files already at those places are replaced; nothing else is touched.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
prefix="${1:-/usr/local}"
case "$prefix" in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

missing=""
for library in libzstd.so.1 libjemalloc.so.2 libdeflate.so.0 libisal.so.2 libz.so.1 liblz4.so.1 liblzma.so.5 libxxhash.so.0 libfuse3.so.3 libcurl.so.4; do
    if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p | grep -q "$library"; then
        missing="$missing $library"
    fi
done
if [ -n "$missing" ]; then
    echo "install.sh: weir needs$missing: apt-get install libzstd1 libjemalloc2 libdeflate0 libisal2 zlib1g liblz4-1 liblzma5 libxxhash0 libfuse3-3 libcurl4 (or your system's packages)" >&2
    exit 1
fi

cd "$here"
find bin share -type d | while IFS= read -r folder; do mkdir -p "$prefix/$folder"; done
find bin share ! -type d | while IFS= read -r path; do
    if [ -L "$path" ]; then
        ln -sfn "$(readlink "$path")" "$prefix/$path"
    else
        case "$path" in bin/*) mode=0755 ;; *) mode=0644 ;; esac
        install -m "$mode" "$path" "$prefix/$path"
    fi
done
echo "install.sh: installed $("$prefix/bin/weir" --version) in $prefix" >&2
