#define _GNU_SOURCE
#include "fuzz_support.h"

#include <stdint.h>
#include <sys/mman.h>
#include <zstd.h>

int weir_fuzz_memfd(void) { return memfd_create("weir-fuzz", MFD_CLOEXEC); }

/// ZSTD_d_forceIgnoreChecksum, outside the stable header (as weir's DecompressionContext uses it).
#define WEIR_FUZZ_FORCE_IGNORE_CHECKSUM ((ZSTD_dParameter)1002)

/// Whether any frame of a stream libzstd decoded is a legacy frame (magic
/// 0xFD2FB51E...0xFD2FB527): walks the frames as libzstd sizes them.
static int has_legacy_frame(const unsigned char *source, size_t size) {
    size_t position = 0;
    while (position + 4 <= size) {
        uint32_t magic = (uint32_t)source[position] | (uint32_t)source[position + 1] << 8
                         | (uint32_t)source[position + 2] << 16 | (uint32_t)source[position + 3] << 24;
        if (magic >= 0xFD2FB51Eu && magic <= 0xFD2FB527u) return 1;
        size_t frame = ZSTD_findFrameCompressedSize(source + position, size - position);
        if (ZSTD_isError(frame) || frame == 0) return 0;
        position += frame;
    }
    return 0;
}

int weir_fuzz_reference_decode(const void *source, size_t source_size, void *destination, size_t capacity,
                               size_t *produced, int ignore_checksum) {
    *produced = 0;
    if (source_size == 0) return WEIR_FUZZ_FAILED;
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL) return WEIR_FUZZ_NOT_COMPARABLE;
    if (ignore_checksum) ZSTD_DCtx_setParameter(dctx, WEIR_FUZZ_FORCE_IGNORE_CHECKSUM, 1);
    ZSTD_inBuffer input = {source, source_size, 0};
    ZSTD_outBuffer output = {destination, capacity, 0};
    int outcome = WEIR_FUZZ_FAILED;
    /* Where the frame being decoded starts, in the input and the output. */
    size_t frame_in = 0, frame_out = 0;
    for (;;) {
        size_t before_in = input.pos, before_out = output.pos;
        size_t hint = ZSTD_decompressStream(dctx, &output, &input);
        if (ZSTD_isError(hint)) { outcome = WEIR_FUZZ_FAILED; break; }
        if (output.pos == output.size) { outcome = WEIR_FUZZ_NOT_COMPARABLE; break; }
        if (hint == 0) {
            /* A frame ended. A size it declares is its content's, as libzstd
             * checks too, but not with the checksum ignored for a frame of
             * empty blocks (zstd 1.5.4 -d --no-check decodes one declaring
             * 400 MB as 0 bytes): weir keeps the rule there as well. */
            unsigned long long declared =
                ZSTD_getFrameContentSize((const char *)source + frame_in, source_size - frame_in);
            if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR
                && declared != (unsigned long long)(output.pos - frame_out)) {
                outcome = WEIR_FUZZ_FAILED;
                break;
            }
            frame_in = input.pos;
            frame_out = output.pos;
        }
        if (input.pos == input.size && hint == 0) { outcome = WEIR_FUZZ_DECODED; break; }
        if (input.pos == before_in && output.pos == before_out) { outcome = WEIR_FUZZ_FAILED; break; }
    }
    ZSTD_freeDCtx(dctx);
    *produced = output.pos;
    if (outcome == WEIR_FUZZ_DECODED && has_legacy_frame(source, source_size)) return WEIR_FUZZ_NOT_COMPARABLE;
    return outcome;
}

long long weir_fuzz_frame_size(const void *source, size_t source_size) {
    size_t size = ZSTD_findFrameCompressedSize(source, source_size);
    return ZSTD_isError(size) ? -1 : (long long)size;
}
