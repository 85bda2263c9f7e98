// A zstd frame decoder in three steps (RFC 8878), for decoding one frame on
// several cores (issue 81; bench/results/2026-11-29-one-frame-split.md and
// 2026-11-29-one-frame-blocks.md).
//
// 1. The scan, zs_scan_block: sequential and cheap. Per block it reads the
//    3-byte header, the literals section's header, the size of a Huffman
//    tree description (copied, not decoded), the sequences section's header
//    and its FSE table descriptions (read, because only reading one gives
//    its size). It gives the block, by value, the descriptions of every
//    table it needs: a repeat mode (a treeless literals section, a repeated
//    FSE table) gets the last description the scan saw. No bitstream is
//    decoded.
// 2. Phase 1, zs_decode_block: the entropy decoding. It reads only the
//    block's bytes and what the scan gave it, and writes only the block's
//    record and the zs_dctx it is given, so different blocks of a frame go
//    through it at once, in any order, one zs_dctx per thread. The repeat
//    offsets chain every sequence of the frame: phase 1 resolves them with
//    the three the block starts with as unknowns, which only sequences
//    before the block's third new offset can meet (at -3, a few a block);
//    those it leaves to phase 2 (ZS_SEQ_EARLY).
// 3. Phase 2, zs_execute: in the frame's order, one block after another. It
//    resolves the ZS_SEQ_EARLY offsets and the repeat offsets the block ends
//    with (zs_exec carries them), checks the offsets against the output
//    before the block, and copies literals and matches.
//
// Each step checks what it reads. A block is good only when all three
// succeed for it; an error in any step, in any order the steps ran, is the
// error of that block: the caller keeps the blocks before it and outputs
// nothing of it or after it (its bytes in the output buffer are unspecified).
// Every input is hostile: a bound or table error gives a negative code,
// never a read or a write out of bounds.
//
// What it does not take: dictionaries (a frame naming one gives
// ZS_ERR_UNSUPPORTED, the caller decodes it with libzstd), legacy formats.
#ifndef ZSPLIT_H
#define ZSPLIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    ZS_OK = 0,
    ZS_ERR_CORRUPT = -1,      // the frame breaks the format
    ZS_ERR_TRUNCATED = -2,    // the input ends inside a frame
    ZS_ERR_UNSUPPORTED = -3,  // a dictionary or a legacy frame: decode it with libzstd
    ZS_ERR_DST_SIZE = -4,     // the output does not fit the capacity given, or the content size (zs_execute)
    ZS_ERR_CHECKSUM = -5,     // the content checksum differs
    ZS_ERR_MEMORY = -6,
};

#define ZS_BLOCK_MAX (128 * 1024)
// Bytes that zs_execute may write past a block's end (wide copies): the output
// buffer holds them beyond the capacity it is given to zs_decompress.
#define ZS_WILDCOPY 32
// Bytes before the output position that zs_execute may overwrite while it
// reads a match: an output buffer used as a ring keeps `hist` (zs_execute)
// at most its size minus this.
#define ZS_RING_SLACK 64
#define ZS_CONTENT_SIZE_UNKNOWN UINT64_MAX

typedef struct {
    uint64_t content_size;  // ZS_CONTENT_SIZE_UNKNOWN when the header has none
    uint64_t window_size;
    uint32_t block_max;     // min(window_size, 128 KiB)
    uint32_t dict_id;
    uint8_t checksum;       // 1: a 4-byte content checksum follows the last block
    uint8_t header_size;
} zs_frame_header;

// One decoded sequence: `ll` literals, then `ml` bytes copied from `off`
// back. With ZS_SEQ_EARLY set in `ml`, `off` is a repeat offset from before
// the block, which zs_execute resolves: the block's first repeat offset
// (bits 16-17 say which of the three) less bits 0-15 (RFC 8878's
// "Repeated_Offset1 - 1", applied that many times, never below 1).
typedef struct {
    uint32_t ll, ml, off;
} zs_seq;
#define ZS_SEQ_EARLY 0x80000000u

enum { ZS_BLOCK_RAW = 0, ZS_BLOCK_RLE = 1, ZS_BLOCK_COMPRESSED = 2 };

typedef struct zs_block_tables zs_block_tables;  // what the scan read for phase 1 (opaque)

// A block: the scan fills the first part, phase 1 the second. No pointer into
// a zs_frame or a zs_dctx, so the scan may move on and phase 1 run anywhere.
// `src` points into the input: the input stays valid until the block is
// executed. `lits`, `seqs` and `t` are owned by the block (zs_block_init),
// sized for the largest valid block, reused block after block.
typedef struct {
    // the scan
    uint8_t kind;
    uint8_t last;
    uint8_t rle_byte;
    uint32_t size;          // bytes the block regenerates (a compressed block's: set by phase 1)
    const uint8_t *src;     // the block's content, after its 3-byte header
    uint32_t src_size;
    zs_block_tables *t;
    // phase 1
    uint8_t *lits;          // ZS_BLOCK_MAX + ZS_WILDCOPY bytes
    uint32_t nlits;
    zs_seq *seqs;
    uint32_t nseqs;
} zs_block;

typedef struct zs_frame zs_frame;  // the scan's state: the frame's header, the last table descriptions
typedef struct zs_dctx zs_dctx;    // phase 1's tables, built from descriptions (one per thread)

// Phase 2's state: what chains the blocks in order.
typedef struct {
    uint64_t produced;  // bytes of the frame's output so far
    uint32_t rep[3];    // the repeat offsets
} zs_exec;

zs_frame *zs_frame_create(void);
void zs_frame_free(zs_frame *f);
zs_dctx *zs_dctx_create(void);
void zs_dctx_free(zs_dctx *c);
int zs_block_init(zs_block *b);
void zs_block_free(zs_block *b);

// Reads a frame header at src (the magic number included) and resets the
// scan's state. Skippable frames are not frames here.
int zs_frame_begin(zs_frame *f, const uint8_t *src, size_t len, zs_frame_header *out);

// The scan: the block at src (its 3-byte header first) into `b`; *consumed
// gets the bytes it takes. Blocks of a frame go through it in order, each
// into a zs_block of its own until it is executed.
int zs_scan_block(zs_frame *f, const uint8_t *src, size_t len, size_t *consumed, zs_block *b);

// Phase 1: entropy-decodes a scanned block into its record (b->lits,
// b->seqs, b->size of a compressed block). Any thread, any order; `c` is
// used by one call at a time (it caches the tables it last built).
int zs_decode_block(zs_dctx *c, zs_block *b);

// Phase 2: the frame's blocks in order from zs_exec_begin. Writes b->size
// bytes at dst (room for b->size + ZS_WILDCOPY bytes there); `hist` bytes
// before dst hold the frame's latest output, what matches may read:
// e->produced when the buffer holds the whole frame, less in a ring (at most
// its size minus ZS_RING_SLACK). Fails on an offset past them, on a last
// block that does not end the output at the frame's content size
// (ZS_ERR_CORRUPT), and with ZS_ERR_DST_SIZE on a block that passes the
// content size when libzstd's streaming decoder sizes its output buffer to
// it (a single-segment frame, or a content size no larger than the window,
// a block and 128 KiB: that decoder's dstSize_tooSmall, "Destination buffer
// is too small", in the same block), both as libzstd's streaming decoder,
// which gives none of that block; on success e->produced grows by b->size
// and the repeat offsets move on.
void zs_exec_begin(zs_exec *e);
int zs_execute(zs_exec *e, const zs_block *b, uint8_t *dst, uint64_t hist);

// The end of a frame, after its last block: the content size (`produced`,
// zs_exec's) and the checksum (`hash`: XXH64, seed 0, of the frame's
// content). *consumed gets the checksum's bytes.
int zs_frame_end(zs_frame *f, uint64_t produced, uint64_t hash, const uint8_t *src, size_t len,
                 size_t *consumed);

// The whole of src (zstd and skippable frames, one after another, as
// ZSTD_decompress takes them) into dst, which holds cap + ZS_WILDCOPY bytes,
// the three steps block after block on this thread. *out_len gets the bytes
// written. ZS_ERR_DST_SIZE: a block past cap, or past its frame's content
// size as zs_execute refuses it (the block is not written either way).
int zs_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, size_t *out_len);

// A ring for phase 2's output when the frame is not held whole: `size`
// bytes (at least the bytes asked, in whole pages) mapped three times in a
// row, so that the block written at mid + (produced % size) and the history
// before it are contiguous whatever the position: zs_execute neither wraps
// nor copies. Pass zs_execute min(produced, window) as `hist`, with `bytes`
// at least the window, a block, ZS_WILDCOPY and ZS_RING_SLACK.
typedef struct {
    uint8_t *mid;
    size_t size;
} zs_ring;
int zs_ring_init(zs_ring *r, uint64_t bytes);
void zs_ring_free(zs_ring *r);

// A checkpoint of the scan at a block boundary (issue 81, item 6: `weir
// mount` reads one frame anywhere): the frame's header and the last table
// descriptions a repeat mode reuses, as zs_frame_state_size() bytes. With
// zs_exec (produced, the repeat offsets), the offset of the next block and
// the frame's last min(produced, window_size) bytes of output, it is all
// that decoding from that block on needs: restored into a zs_frame, the
// frame's next blocks go through the three steps as they would have. The
// bytes hold no pointer but the descriptions' numbers, unique in the
// process (a zs_dctx keeps tables by them): restore them only in the
// process that saved them. zs_frame_restore refuses (ZS_ERR_CORRUPT) bytes
// of another size or a header they do not hold.
size_t zs_frame_state_size(void);
void zs_frame_save(const zs_frame *f, void *out);
int zs_frame_restore(zs_frame *f, const void *in, size_t len);

const char *zs_error_name(int code);

#ifdef __cplusplus
}
#endif
#endif
