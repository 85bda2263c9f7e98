#ifndef WEIR_FUZZ_SUPPORT_H
#define WEIR_FUZZ_SUPPORT_H

#include <stddef.h>

/// An anonymous in-memory file (memfd_create): a regular file to the code
/// under test, with no disk and no name to clean up. -1 on failure.
int weir_fuzz_memfd(void);

/// What libzstd's own streaming decoder makes of a whole input.
enum weir_fuzz_reference {
    /// Decoded, and the input ends where a frame ends.
    WEIR_FUZZ_DECODED = 0,
    /// libzstd reports an error, or the input ends inside a frame (or is empty).
    WEIR_FUZZ_FAILED = 1,
    /// Not comparable: more output than `capacity`, or a legacy (pre-v0.8)
    /// frame, which libzstd may decode and weir refuses by design.
    WEIR_FUZZ_NOT_COMPARABLE = 2,
};

/// Decodes `source` with ZSTD_decompressStream (default window limit, 2^27,
/// as weir's default) into `destination`; `*produced` gets the output size.
/// With `ignore_checksum`, content checksums are not verified (as weir's
/// --no-check).
int weir_fuzz_reference_decode(const void *source, size_t source_size, void *destination, size_t capacity,
                               size_t *produced, int ignore_checksum);

/// ZSTD_findFrameCompressedSize: the size of the frame (zstd or skippable)
/// that `source` begins with; -1 when libzstd reports an error.
long long weir_fuzz_frame_size(const void *source, size_t source_size);

#endif
