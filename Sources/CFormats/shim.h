// The other formats Debian's zstd reads and writes (`--format=`), through
// Debian's libraries: libdeflate (whole gzip members, as weir compresses
// independent chunks), ISA-L's igzip (a whole mapped .gz, faster than
// zlib: bench/results/2026-11-27-comment-numbers.md), zlib (gzip from a
// pipe, piece by piece), liblz4's frame API and liblzma (.xz, .lzma).
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include <lz4frame.h>
#include <lzma.h>

/// zlib's inflateInit2 is a macro, which Swift does not see.
static inline int weir_inflate_init(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
