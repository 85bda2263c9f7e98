// The other formats Debian's zstd reads and writes (`--format=`), through
// Debian's libraries: libdeflate (whole gzip members, as weir compresses
// independent chunks), zlib (gzip decoded as a stream, piece by piece),
// liblz4's frame API and liblzma (.xz and the legacy .lzma).
#include <libdeflate.h>
#include <zlib.h>
#include <lz4frame.h>
#include <lzma.h>

/// zlib's inflateInit2 is a macro, which Swift does not see.
static inline int weir_inflate_init(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
