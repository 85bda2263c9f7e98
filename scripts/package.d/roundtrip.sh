#!/bin/sh
# Run inside a clean root where weir was installed (scripts/harness/package-test):
#   roundtrip.sh make DIR    a 100 MB file and weir's outputs of it (file, pipe)
#   roundtrip.sh check DIR   weir reads zstd's outputs of it (file, pipe) and
#                            its own: --range, -l, -t, unweir, weircat
# Between the two, zstd decodes weir's outputs and writes its own
# (big.zstd.zst, pipe.zstd.zst): the root's zstd, or the host's.
set -eu
step="$1"
cd "$2"
case "$step" in
make)
    # Text that compresses (numbers), then 16 MB that does not.
    seq 1 20000000 | head -c 84000000 >big
    head -c 16000000 /dev/urandom >>big
    [ "$(wc -c <big)" = 100000000 ]
    weir -q big -o big.weir.zst
    cat big | weir -c >pipe.weir.zst
    ;;
check)
    weir -q -d big.zstd.zst -o back.file
    cmp big back.file
    cat pipe.zstd.zst | weir -dc | cmp big -
    weir -t big.weir.zst
    # 1 MiB at 50 MB: only the frames that hold it.
    tail -c +50000001 big | head -c 1048576 >range.expected
    weir -d --range=50000000:+1M big.weir.zst -c | cmp - range.expected
    weir -l big.weir.zst | grep -q 'big.weir.zst'
    [ "$(weir -l big.weir.zst | awk 'NR == 2 { print $1 }')" -gt 1 ]  # several frames
    cp big.weir.zst alias.zst
    unweir -q alias.zst
    cmp big alias
    weircat big.weir.zst | cmp big -
    rm -f back.file alias alias.zst range.expected
    echo "roundtrip.sh: weir $(weir --version | cut -d' ' -f2) round trips passed" >&2
    ;;
*) echo "roundtrip.sh: make or check" >&2; exit 2 ;;
esac
