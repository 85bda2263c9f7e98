// A zstd frame decoder in two phases (RFC 8878), the first brick of decoding
// one frame on several cores (issue 81). Phase 1, zs_decode_block, parses a
// block and entropy-decodes it: literals (raw, RLE, Huffman with 1 or 4
// streams, the table described or repeated) and sequences (every table mode)
// into a record whose offsets are absolute, the repeat offsets resolved in
// decode order. It carries the entropy state (the Huffman table, the three
// FSE tables, the repeat offsets) from block to block, and it checks every
// bound a record's execution relies on, so that phase 2, zs_execute, copies
// literals and matches into the output without a check and cannot fail.
// Phase 1 never reads the window's bytes: only where each block starts in
// the output. So phase 1 of block N+1 can run on one core while phase 2 of
// block N runs on another.
//
// What it does not take: dictionaries (a frame naming one gives
// ZS_ERR_UNSUPPORTED, the caller decodes it with libzstd), legacy formats.
// Every input is hostile: a bound or table error gives a negative code,
// never a read or a write out of bounds.
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
    ZS_ERR_DST_SIZE = -4,     // the output does not fit the capacity given
    ZS_ERR_CHECKSUM = -5,     // the content checksum differs
    ZS_ERR_MEMORY = -6,
};

#define ZS_BLOCK_MAX (128 * 1024)
// Bytes that zs_execute may write past a block's end (wide copies): the output
// buffer holds them beyond the capacity it is given to zs_decompress.
#define ZS_WILDCOPY 32
#define ZS_CONTENT_SIZE_UNKNOWN UINT64_MAX

typedef struct {
    uint64_t content_size;  // ZS_CONTENT_SIZE_UNKNOWN when the header has none
    uint64_t window_size;
    uint32_t block_max;     // min(window_size, 128 KiB)
    uint32_t dict_id;
    uint8_t checksum;       // 1: a 4-byte content checksum follows the last block
    uint8_t header_size;
} zs_frame_header;

// One decoded sequence: `ll` literals, then `ml` bytes copied from `off` back.
typedef struct {
    uint32_t ll, ml, off;
} zs_seq;

enum { ZS_BLOCK_RAW = 0, ZS_BLOCK_RLE = 1, ZS_BLOCK_COMPRESSED = 2 };

// A block's record: what phase 2 needs, no pointer into the decoder's state.
// `raw` points into the input (a raw block's bytes). `lits` and `seqs` are
// owned by the record (zs_block_init), sized for the largest valid block.
typedef struct {
    uint8_t kind;
    uint8_t last;
    uint8_t rle_byte;
    uint32_t size;          // bytes the block regenerates
    uint64_t position;      // where in the frame's output the block starts
    const uint8_t *raw;
    uint8_t *lits;          // ZS_BLOCK_MAX + ZS_WILDCOPY bytes
    uint32_t nlits;
    zs_seq *seqs;
    uint32_t nseqs;
} zs_block;

typedef struct zs_frame zs_frame;  // the entropy state a frame carries

zs_frame *zs_frame_create(void);
void zs_frame_free(zs_frame *f);
int zs_block_init(zs_block *b);
void zs_block_free(zs_block *b);

// Reads a frame header at src (the magic number included) and resets the
// frame's entropy state. Skippable frames are not frames here.
int zs_frame_begin(zs_frame *f, const uint8_t *src, size_t len, zs_frame_header *out);

// Phase 1: the block at src (its 3-byte header first) into `b`; *consumed
// gets the bytes it takes. Blocks of a frame go through it in order.
int zs_decode_block(zs_frame *f, const uint8_t *src, size_t len, size_t *consumed, zs_block *b);

// Phase 2: writes b->size bytes at frame_out + b->position; frame_out holds
// the frame's output so far (the bytes before b->position), and room for
// b->size + ZS_WILDCOPY bytes from b->position.
void zs_execute(const zs_block *b, uint8_t *frame_out);

// The end of a frame, after its last block: the content size and the
// checksum (`hash`: XXH64, seed 0, of the frame's content). *consumed gets the
// checksum's bytes.
int zs_frame_end(zs_frame *f, uint64_t produced, uint64_t hash, const uint8_t *src, size_t len,
                 size_t *consumed);

// The whole of src (zstd and skippable frames, one after another, as
// ZSTD_decompress takes them) into dst, which holds cap + ZS_WILDCOPY bytes.
// *out_len gets the bytes written.
int zs_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, size_t *out_len);

const char *zs_error_name(int code);

#ifdef __cplusplus
}
#endif
#endif
