// The three-step zstd frame decoder of zsplit.h, written from RFC 8878.
//
// Where RFC 8878 leaves a damaged frame's reading open, this decoder reads
// it as libzstd 1.5.4's streaming decoder (ZSTD_decompressContinue, which
// ZSTD_decompressStream drives) does, so that a differential test can ask for
// the same bytes and the same success or failure on every input
// (scripts/harness/zstd-split-check, Fuzz/zsplit):
// - a sequences bitstream: the three states are updated after the last
//   sequence too, and the block is accepted when that reading reaches or
//   passes the stream's start; bits read past the start are the ones
//   libzstd's 64-bit register gives there (bwd_read, bwd_read_fast);
// - a repeat offset of 0 (Repeated_Offset1 - 1 when it is 1) is read as 1;
// - a compressed block of size 0 is an empty block;
// - Huffman tables up to 12 bits, a block's regenerated size at most
//   min(Window_Size, 128 KiB), its compressed size too (an RLE block counts 1).
// What differs, and why, is in bench/results/2026-11-29-one-frame-split.md.
//
// Which step checks what: the scan checks what it must read to find the
// next block and the tables' descriptions (headers, sizes, an FSE table
// description, a repeat mode with nothing to repeat); phase 1 the rest of a
// block alone (Huffman trees and streams, the sequences bitstream, literal
// counts, the block's size); phase 2 what needs the blocks before it (an
// offset past the output). Each check is the one the sequential decoder
// made, in the step that has what it needs; a block fails in one step or
// another, the same blocks fail.
#include "zsplit.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#if defined(__x86_64__)
#include <cpuid.h>
#define ZS_X86 1
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zsplit reads little-endian words: x86-64 and arm64"
#endif

#ifdef ZS_TRACE
int zs_trace_line;     // the line of the last error, for the differential tool's reports
int zs_trace_huf_end;  // 1: the last error was a Huffman stream's end (see bench/results)
#define FAIL(e) (zs_trace_line = __LINE__, zs_trace_huf_end = 0, (e))
#define FAIL_HUF_END(e) (zs_trace_line = __LINE__, zs_trace_huf_end = 1, (e))
#else
#define FAIL(e) (e)
#define FAIL_HUF_END(e) (e)
#endif

#define MAGIC 0xFD2FB528u
#define MAX_SEQS (ZS_BLOCK_MAX / 3 + 1)  // each sequence regenerates 3 bytes or more
#define HUF_LOG_MAX 12                   // libzstd takes 12; RFC 8878 says 11
#define LL_MAX 35
#define ML_MAX 52
#define OF_MAX 31
#define LL_LOG_MAX 9
#define ML_LOG_MAX 9
#define OF_LOG_MAX 8

static inline uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint32_t rd16(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t rd24(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16; }
static inline unsigned highbit32(uint32_t v) { return 31u - (unsigned)__builtin_clz(v); }  // v > 0

// ---- tables ----------------------------------------------------------------

// One FSE state of a sequence table: the symbol's baseline and extra bits,
// and how to reach the next state.
typedef struct {
    uint32_t base;   // literal or match length baseline; for offsets 1 << code
    uint16_t next;   // next state's baseline
    uint8_t nb;      // bits read for the next state
    uint8_t extra;   // extra bits of the value (the offset code itself)
} seq_cell;

typedef struct {
    uint16_t next;
    uint8_t nb;
    uint8_t sym;
} fse_cell;

typedef struct {
    uint8_t sym;
    uint8_t nb;
} huf_cell;

static const uint32_t ll_base[LL_MAX + 1] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,  12,  13,  14,  15,   16,   18,
    20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t ll_bits[LL_MAX + 1] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,  1,
                                            1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint32_t ml_base[ML_MAX + 1] = {
    3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,  17,  18,  19,   20,   21,   22,   23,    24,    25,   26,
    27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099, 8195,
    16387, 32771, 65539};
static const uint8_t ml_bits[ML_MAX + 1] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                                            2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
// RFC 8878 "Default Distributions".
static const int16_t ll_default[LL_MAX + 1] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
                                               2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t ml_default[ML_MAX + 1] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                               1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                               1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t of_default[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};


// ---- what the scan gives a block, and phase 1's tables ----------------------------

// A Huffman tree description is at most 1 + 127 bytes (FSE-coded weights) or
// 1 + 64 (4-bit weights).
#define HUF_DESC_MAX 128

// Description numbers, unique in the process: a zs_dctx keeps the tables it
// built last by number, so blocks that repeat a table rebuild nothing.
static _Atomic uint64_t next_serial = 1;
static uint64_t new_serial(void) { return atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed); }

typedef struct {
    uint64_t serial;  // 0: none
    uint32_t len;
    uint8_t bytes[HUF_DESC_MAX + 8];  // zeros past len: whole-word loads stay in it
} huf_desc;

enum { SEQ_PREDEFINED = 0, SEQ_RLE = 1, SEQ_FSE = 2 };

// One of the three tables (literal lengths, offsets, match lengths) of a
// sequences section.
typedef struct {
    uint64_t serial;  // SEQ_FSE: the description's number
    uint8_t mode;
    uint8_t sym;      // SEQ_RLE: the symbol
    uint8_t log;      // SEQ_FSE: the accuracy log
    uint8_t nsym;     // SEQ_FSE: the symbols described
    int16_t norm[ML_MAX + 1];
} seq_desc;

// What the scan read of a compressed block: where its parts start in
// b->src, and copies of the table descriptions in effect for it.
struct zs_block_tables {
    uint32_t block_max;
    // Every block: the frame's content size (the header's, or
    // ZS_CONTENT_SIZE_UNKNOWN), where the last block must end (zs_execute).
    uint64_t content_size;
    // Every block: where the output must stop, or ZS_CONTENT_SIZE_UNKNOWN
    // (zs_frame's stream_end).
    uint64_t stream_end;
    uint8_t lit_type;  // 0 raw, 1 RLE, 2 Huffman (described in the block or repeated)
    uint8_t four;      // Huffman: 4 streams
    uint32_t nlits;
    uint32_t lit_off;  // the raw bytes, the RLE byte, or the Huffman streams (past a description)
    uint32_t lit_len;  // Huffman: the streams' bytes, the jump table included
    uint32_t nseqs;
    uint32_t seq_off;  // the sequences bitstream
    // phase 1, for phase 2: the repeat offsets after the block (SYM_REP
    // values where they come from before it), how far its offsets reach
    // before its start, and the sequences up to the last ZS_SEQ_EARLY one
    uint64_t rep_out[3];
    uint64_t reach;
    uint32_t early_end;
    huf_desc huf;      // Huffman
    seq_desc seq[3];   // nseqs > 0
};

// The scan's state: the frame's header and the last descriptions.
struct zs_frame {
    zs_frame_header h;
    // The frame's output ends here, content size or not, for libzstd's
    // streaming decoder: its output buffer is ZSTD_decodingBufferSize_min
    // (zstd_decompress.c 1.5.4:1927-1932), min(content size, window + block
    // + 128 KiB + 2 * WILDCOPY_OVERLENGTH), the window at least 1 KiB
    // (2174; WILDCOPY_OVERLENGTH is 32, zstd_internal.h:203). When that is the content size, the buffer never wraps (2273)
    // and a block gets what is left of it (ZSTD_decompressContinueStream,
    // 2008): a block past the content size is refused with
    // dstSize_tooSmall (ZSTD_copyRawBlock 891, ZSTD_setRleBlock 904, and
    // in a compressed block the literals, zstd_decompress_block.c 176, 254,
    // 302, or the sequence that passes the end, 884, 931, 1558), none of
    // its bytes given. When it is the ring, any block fits, and the content
    // size is only the last block's error (corruption_detected, 1351).
    // Single-segment frames (window = content size) are always the first
    // case. ZS_CONTENT_SIZE_UNKNOWN in the second.
    uint64_t stream_end;
    int have_huf;  // a Huffman tree was described in this frame
    int have_seq;  // a block with sequences set the three tables
    int ended;     // the last block was scanned
    huf_desc huf;
    seq_desc seq[3];
};

// Phase 1's tables, built from descriptions, kept by their numbers.
struct zs_dctx {
    int bmi2;  // phase 1's BMI2 build
    uint64_t huf_serial;
    uint64_t seq_serial[3];
    unsigned huf_log;
    huf_cell huf[1 << HUF_LOG_MAX];
    seq_cell fse[3][1 << LL_LOG_MAX];  // LL_LOG_MAX = ML_LOG_MAX >= OF_LOG_MAX
    seq_cell rle[3];
    seq_cell ll_def[64], of_def[32], ml_def[64];
};

// Spreads a normalized distribution (RFC 8878, "From normalized distribution
// to decoding tables") into `sym`, `nb`, `next` for 1 << log states.
// The distribution sums to 1 << log (read_ncount checks it).
//
// The symbols of `norm` spread over the 1 << log states (RFC 8878 4.1.1):
// each state's symbol in `sym`, each symbol's first count in `count` (a
// "less than 1" symbol, -1, takes one state from the top, counted 1).
static inline int fse_spread_symbols(uint8_t *sym, uint16_t *count, const int16_t *norm, unsigned nsym,
                                     unsigned log) {
    uint32_t size = 1u << log, high = size - 1, mask = size - 1;
    uint32_t step = (size >> 1) + (size >> 3) + 3, pos = 0;
    for (unsigned s = 0; s < nsym; s++) {
        if (norm[s] == -1) {
            sym[high--] = (uint8_t)s;
            count[s] = 1;
        } else {
            count[s] = (uint16_t)norm[s];
        }
    }
    for (unsigned s = 0; s < nsym; s++) {
        for (int i = 0; i < norm[s]; i++) {
            sym[pos] = (uint8_t)s;
            do pos = (pos + step) & mask;
            while (pos > high);
        }
    }
    return pos != 0 ? FAIL(ZS_ERR_CORRUPT) : 0;
}

static int fse_spread(uint8_t *sym, uint8_t *nb, uint16_t *next, const int16_t *norm, unsigned nsym, unsigned log) {
    uint32_t size = 1u << log;
    uint16_t count[256];
    int r = fse_spread_symbols(sym, count, norm, nsym, log);
    if (r) return r;
    for (uint32_t u = 0; u < size; u++) {
        uint32_t x = count[sym[u]]++;
        unsigned bits = log - highbit32(x);
        nb[u] = (uint8_t)bits;
        next[u] = (uint16_t)((x << bits) - size);
    }
    return 0;
}

// The same spread as fse_spread, into a sequence table in one pass over the
// states: each cell gets its symbol's baseline and extra bits (from per-symbol
// arrays, not a branch a cell). Phase 1 builds three a block at -3: 8.0M
// instructions on l30.3.zst, where spreading then copying took 12.3M.
static int seq_table(seq_cell *t, const int16_t *norm, unsigned nsym, unsigned log, const uint32_t *base,
                     const uint8_t *bits) {
    uint32_t size = 1u << log;
    uint8_t sym[512];
    uint16_t count[256];
    uint32_t sbase[256];
    uint8_t sextra[256];
    for (unsigned s = 0; s < nsym; s++) {
        if (base) {
            sbase[s] = base[s];
            sextra[s] = bits[s];
        } else {  // offsets: Offset_Value = (1 << code) + code extra bits
            sbase[s] = 1u << s;
            sextra[s] = (uint8_t)s;
        }
    }
    int r = fse_spread_symbols(sym, count, norm, nsym, log);
    if (r) return r;
    for (uint32_t u = 0; u < size; u++) {
        unsigned s = sym[u];
        uint32_t x = count[s]++;
        unsigned nbits = log - highbit32(x);
        t[u].nb = (uint8_t)nbits;
        t[u].next = (uint16_t)((x << nbits) - size);
        t[u].base = sbase[s];
        t[u].extra = sextra[s];
    }
    return 0;
}

// ---- bitstreams --------------------------------------------------------------

// A forward bitstream (FSE table descriptions), read as libzstd reads it
// (FSE_readNCount): a 32-bit word at a byte position `ip` and `bits` already
// used of it. The position never passes the section's last four bytes;
// past there the count of used bits wraps modulo 32, so a description that
// runs past its section's end (damaged: no encoder writes one) reads those
// last bytes again, not zeros, and decodes as libzstd decodes it (the oracle
// of scripts/harness/zstd-split-diff.c found one: libzstd took it, a zero-padded
// read refused it). At least 8 bytes.
typedef struct {
    const uint8_t *s;
    size_t len, ip;
    int bits;
    uint32_t word;  // rd32(s + ip) >> bits, as last loaded
} fwd_t;

// Moves ip past the whole bytes used and loads the next word.
static inline void fwd_advance(fwd_t *r) {
    if (r->ip + 7 <= r->len || r->ip + (size_t)(r->bits >> 3) + 4 <= r->len) {
        r->ip += (size_t)(r->bits >> 3);
        r->bits &= 7;
    } else {
        // ip <= len - 4 always: past len - 7, at most 3 whole bytes are used.
        r->bits = (r->bits - 8 * (int)(r->len - 4 - r->ip)) & 31;
        r->ip = r->len - 4;
    }
    r->word = rd32(r->s + r->ip) >> r->bits;
}

static int read_ncount8(int16_t *norm, unsigned *maxsym, unsigned *log, const uint8_t *s, size_t len,
                        size_t *used) {
    unsigned limit = *maxsym + 1;
    memset(norm, 0, limit * sizeof(norm[0]));
    fwd_t r = {s, len, 0, 4, rd32(s)};
    unsigned al = (r.word & 15) + 5;
    if (al > 15) return FAIL(ZS_ERR_CORRUPT);
    r.word >>= 4;
    int remaining = (1 << al) + 1, threshold = 1 << al, nbits = (int)al + 1;
    unsigned n = 0;
    int previous0 = 0;
    for (;;) {
        if (previous0) {
            // 2-bit repeat flags: each 3 adds three zeros and another flag
            // follows. Runs of twelve are skipped three bytes at a time.
            unsigned repeats = (unsigned)__builtin_ctz(~r.word | 0x80000000u) >> 1;
            while (repeats >= 12) {
                n += 36;
                if (r.ip + 7 <= r.len) {
                    r.ip += 3;
                } else {
                    r.bits = (r.bits + 8 * (int)(r.ip + 7 - r.len)) & 31;  // 3 bytes on, from len - 4
                    r.ip = r.len - 4;
                }
                r.word = rd32(s + r.ip) >> r.bits;
                repeats = (unsigned)__builtin_ctz(~r.word | 0x80000000u) >> 1;
            }
            n += 3 * repeats;
            r.word >>= 2 * repeats;
            r.bits += 2 * (int)repeats;
            n += r.word & 3;
            r.bits += 2;
            if (n >= limit) break;
            fwd_advance(&r);
        }
        int max = (2 * threshold - 1) - remaining, count;
        if ((int)(r.word & (uint32_t)(threshold - 1)) < max) {
            count = (int)(r.word & (uint32_t)(threshold - 1));
            r.bits += nbits - 1;
        } else {
            count = (int)(r.word & (uint32_t)(2 * threshold - 1));
            if (count >= threshold) count -= max;
            r.bits += nbits;
        }
        count--;
        remaining -= count < 0 ? -count : count;
        norm[n++] = (int16_t)count;
        previous0 = count == 0;
        if (remaining < threshold) {
            if (remaining <= 1) break;
            nbits = (int)highbit32((uint32_t)remaining) + 1;
            threshold = 1 << (nbits - 1);
        }
        if (n >= limit) break;
        fwd_advance(&r);
    }
    if (remaining != 1 || n > limit || r.bits > 32) return FAIL(ZS_ERR_CORRUPT);
    *maxsym = n - 1;
    *log = al;
    *used = r.ip + (size_t)((r.bits + 7) >> 3);
    return 0;
}

// Reads an FSE table description (RFC 8878, "FSE Table Description") of at
// most *maxsym + 1 symbols. *maxsym gets the last symbol, *log the accuracy,
// *used the bytes read. Fewer than 8 bytes are read as libzstd does: padded
// with zeros, refused if the description used a byte past them.
static int read_ncount(int16_t *norm, unsigned *maxsym, unsigned *log, const uint8_t *s, size_t len, size_t *used) {
    if (len == 0) return FAIL(ZS_ERR_CORRUPT);
    if (len >= 8) return read_ncount8(norm, maxsym, log, s, len, used);
    uint8_t padded[8] = {0};
    memcpy(padded, s, len);
    int r = read_ncount8(norm, maxsym, log, padded, sizeof padded, used);
    if (r) return r;
    return *used > len ? FAIL(ZS_ERR_CORRUPT) : 0;
}

// A backward bitstream (RFC 8878, "Huffman-coded Streams", "FSE"): bits
// [0, p) are unread; the next value is read from the top.
typedef struct {
    const uint8_t *s;
    size_t len;
    size_t avail;  // bytes readable from s (the block's end), for whole-word loads
    int64_t p;     // negative once read past the start
    uint64_t c0;   // the first (up to) 8 bytes: what libzstd's register holds at the start
} bwd_t;

static int bwd_init(bwd_t *b, const uint8_t *s, size_t len, size_t avail) {
    if (len == 0 || s[len - 1] == 0) return FAIL(ZS_ERR_CORRUPT);
    b->s = s;
    b->len = len;
    b->avail = avail;
    b->p = 8 * (int64_t)(len - 1) + highbit32(s[len - 1]);
    uint64_t c = 0;
    for (size_t i = 0; i < 8 && i < len; i++) c |= (uint64_t)s[i] << (8 * i);
    b->c0 = c;
    return 0;
}

// Bits [q, q + nb) of the stream; 0 <= q, q + nb <= 8 * len, nb <= 56.
static inline uint64_t bwd_bits_at(const bwd_t *b, int64_t q, unsigned nb) {
    size_t o = (size_t)q >> 3;
    uint64_t v;
    if (o + 8 <= b->avail) {
        v = rd64(b->s + o);
    } else {
        v = 0;
        for (size_t i = 0; i < 8 && o + i < b->len; i++) v |= (uint64_t)b->s[o + i] << (8 * i);
    }
    return (v >> (q & 7)) & ((1ull << nb) - 1);
}

// Reads nb bits (nb <= 31). Past the start, what libzstd's BIT_readBits
// gives from its register there (a damaged stream only).
static inline uint32_t bwd_read(bwd_t *b, unsigned nb) {
    if (nb == 0) return 0;
    int64_t q = b->p - (int64_t)nb;
    uint64_t v;
    if (q >= 0) v = bwd_bits_at(b, q, nb);
    else v = (b->c0 >> ((uint64_t)q & 63)) & ((1ull << nb) - 1);
    b->p = q;
    return (uint32_t)v;
}

// The same for the extra bits of a value (nb >= 1): libzstd's BIT_readBitsFast.
static inline uint32_t bwd_read_fast(bwd_t *b, unsigned nb) {
    int64_t q = b->p - (int64_t)nb;
    uint64_t v;
    if (q >= 0) {
        v = bwd_bits_at(b, q, nb);
    } else {
        uint64_t consumed = (uint64_t)(64 - b->p);
        v = (b->c0 << (consumed & 63)) >> ((64 - nb) & 63);
    }
    b->p = q;
    return (uint32_t)v;
}

// ---- Huffman -------------------------------------------------------------------

// FSE-compressed Huffman weights: two interleaved states over one table; the
// stream's end is found by reading past it (RFC 8878, "FSE compression of
// Huffman weights"). At most 255 weights.
static int huf_fse_weights(uint8_t *w, size_t *nw, const uint8_t *s, size_t len, size_t avail) {
    int16_t norm[256];
    unsigned maxsym = 255, log;
    size_t used;
    int r = read_ncount(norm, &maxsym, &log, s, len, &used);
    if (r) return r;
    if (log > 6) return FAIL(ZS_ERR_CORRUPT);
    uint8_t sym[64], nb[64];
    uint16_t next[64];
    r = fse_spread(sym, nb, next, norm, maxsym + 1, log);
    if (r) return r;
    bwd_t b;
    if (used > len || bwd_init(&b, s + used, len - used, avail - used)) return FAIL(ZS_ERR_CORRUPT);
    uint32_t s1 = bwd_read(&b, log), s2 = bwd_read(&b, log);
    size_t n = 0;
    for (;;) {
        if (n > 253) return FAIL(ZS_ERR_CORRUPT);
        w[n++] = sym[s1];
        s1 = next[s1] + bwd_read(&b, nb[s1]);
        if (b.p < 0) {
            w[n++] = sym[s2];
            break;
        }
        if (n > 253) return FAIL(ZS_ERR_CORRUPT);
        w[n++] = sym[s2];
        s2 = next[s2] + bwd_read(&b, nb[s2]);
        if (b.p < 0) {
            w[n++] = sym[s1];
            break;
        }
    }
    *nw = n;
    return 0;
}

// Builds the Huffman table of a tree description (RFC 8878, "Huffman Tree
// Description") into c->huf, unless c holds it already. The scan checked
// that the description's bytes are in the block.
static int huf_build(zs_dctx *c, const huf_desc *d) {
    if (c->huf_serial == d->serial) return 0;
    c->huf_serial = 0;
    const uint8_t *s = d->bytes;
    uint8_t w[256];
    size_t nw;
    unsigned hb = s[0];
    if (hb >= 128) {
        nw = hb - 127;
        for (size_t i = 0; i < nw; i++) w[i] = (i & 1) ? (s[1 + i / 2] & 15) : (s[1 + i / 2] >> 4);
    } else {
        int r = huf_fse_weights(w, &nw, s + 1, hb, d->len - 1 + 8);
        if (r) return r;
    }
    uint32_t total = 0, rank1 = 0;
    for (size_t i = 0; i < nw; i++) {
        if (w[i] > HUF_LOG_MAX) return FAIL(ZS_ERR_CORRUPT);
        if (w[i]) total += 1u << (w[i] - 1);
        rank1 += w[i] == 1;
    }
    if (total == 0) return FAIL(ZS_ERR_CORRUPT);
    unsigned log = highbit32(total) + 1;
    if (log > HUF_LOG_MAX) return FAIL(ZS_ERR_CORRUPT);
    uint32_t rest = (1u << log) - total;
    if (rest & (rest - 1)) return FAIL(ZS_ERR_CORRUPT);  // the last weight's share is a power of 2
    w[nw] = (uint8_t)(highbit32(rest) + 1);
    rank1 += w[nw] == 1;
    if (rank1 < 2 || (rank1 & 1)) return FAIL(ZS_ERR_CORRUPT);
    size_t nsym = nw + 1;
    // Codes go by weight, then symbol: a symbol of weight k fills 2^(k-1)
    // consecutive states of the 2^log table, indexed by the next log bits.
    // Where each weight's states start, then one pass over the symbols.
    uint32_t start[HUF_LOG_MAX + 2] = {0}, pos = 0;
    for (size_t sy = 0; sy < nsym; sy++) start[w[sy]]++;
    for (unsigned k = 1; k <= log; k++) {
        uint32_t n = start[k] << (k - 1);
        start[k] = pos;
        pos += n;
    }
    for (size_t sy = 0; sy < nsym; sy++) {
        unsigned k = w[sy];
        if (!k) continue;
        uint32_t n = 1u << (k - 1);
        huf_cell cell = {(uint8_t)sy, (uint8_t)(log + 1 - k)};
        huf_cell *d = c->huf + start[k];
        for (uint32_t i = 0; i < n; i++) d[i] = cell;
        start[k] += n;
    }
    c->huf_log = log;
    c->huf_serial = d->serial;
    return 0;
}

// A Huffman stream being decoded: bits [0, p) unread, i symbols out.
typedef struct {
    bwd_t b;
    int64_t p;
    size_t i;
} huf_st;

static inline __attribute__((always_inline)) int huf_start(huf_st *h, const uint8_t *s, size_t len, size_t avail) {
    if (bwd_init(&h->b, s, len, avail)) return FAIL_HUF_END(ZS_ERR_CORRUPT);
    h->p = h->b.p;
    h->i = 0;
    return 0;
}

// The rest of a stream, to n symbols in all; it must end exactly at its start.
static inline __attribute__((always_inline)) int huf_finish(const zs_dctx *c, huf_st *h, uint8_t *out, size_t n) {
    const huf_cell *t = c->huf;
    const unsigned L = c->huf_log;
    const uint64_t mask = (1ull << L) - 1;
    const uint8_t *s = h->b.s;
    const size_t avail = h->b.avail;
    int64_t p = h->p;
    size_t i = h->i;
    // Whole-word loads while every symbol of the step has its bits in the
    // block: 4 symbols take at most 4 * 12 bits.
    while (n - i >= 4 && p >= 4 * (int64_t)L) {
        int64_t q = p - (int64_t)L;
        if (((size_t)q >> 3) + 8 > avail) break;
        for (int k = 0; k < 4; k++) {
            q = p - (int64_t)L;
            huf_cell cell = t[(rd64(s + ((size_t)q >> 3)) >> (q & 7)) & mask];
            out[i++] = cell.sym;
            p -= cell.nb;
        }
    }
    for (; i < n; i++) {
        uint32_t idx;
        if (p >= (int64_t)L) {
            h->b.p = p;
            idx = (uint32_t)bwd_bits_at(&h->b, p - (int64_t)L, L);
        } else if (p > 0) {
            idx = (uint32_t)(bwd_bits_at(&h->b, 0, (unsigned)p) << (L - (unsigned)p));
        } else {
            return FAIL_HUF_END(ZS_ERR_CORRUPT);  // past the start before the last symbol
        }
        out[i] = t[idx].sym;
        p -= t[idx].nb;
    }
    return p == 0 ? 0 : FAIL_HUF_END(ZS_ERR_CORRUPT);
}

// The four streams of a literals section, `seg` symbols each but the last.
// First one symbol of each in turn, while every stream has whole-word loads
// and 4 symbols left in the shortest: four dependency chains at once, where
// one stream is one chain of table loads (libzstd interleaves them too).
// Then each stream's rest alone. The symbols and the bits each stream reads
// are the same as stream after stream.
static inline __attribute__((always_inline)) int huf_4streams(const zs_dctx *c, uint8_t *out, size_t n, size_t seg,
                                                             const uint8_t *q, const size_t *lens, size_t av) {
    huf_st h[4];
    for (int k = 0; k < 4; k++) {
        int r = huf_start(&h[k], q, lens[k], av);
        if (r) return r;
        q += lens[k];
        av -= lens[k];
    }
    const huf_cell *t = c->huf;
    const unsigned L = c->huf_log;
    const uint64_t mask = (1ull << L) - 1;
    const int64_t T = 4 * (int64_t)L;
    const size_t last = n - 3 * seg;  // the fourth stream's symbols, the fewest
    uint8_t *o0 = out, *o1 = out + seg, *o2 = out + 2 * seg, *o3 = out + 3 * seg;
    const uint8_t *s0 = h[0].b.s, *s1 = h[1].b.s, *s2 = h[2].b.s, *s3 = h[3].b.s;
    const size_t a0 = h[0].b.avail, a1 = h[1].b.avail, a2 = h[2].b.avail, a3 = h[3].b.avail;
    int64_t p0 = h[0].p, p1 = h[1].p, p2 = h[2].p, p3 = h[3].p;
    size_t i = 0;
#define HUF_FITS(p, a) ((p) >= T && (((size_t)((p) - (int64_t)L)) >> 3) + 8 <= (a))
#define HUF_ONE(p, s, o)                                                          \
    {                                                                             \
        int64_t b_ = (p) - (int64_t)L;                                            \
        huf_cell cell = t[(rd64((s) + ((size_t)b_ >> 3)) >> (b_ & 7)) & mask];    \
        (o)[i] = cell.sym;                                                        \
        (p) -= cell.nb;                                                           \
    }
    while (last - i >= 4 && HUF_FITS(p0, a0) && HUF_FITS(p1, a1) && HUF_FITS(p2, a2) && HUF_FITS(p3, a3)) {
        for (int k = 0; k < 4; k++, i++) {
            HUF_ONE(p0, s0, o0)
            HUF_ONE(p1, s1, o1)
            HUF_ONE(p2, s2, o2)
            HUF_ONE(p3, s3, o3)
        }
    }
#undef HUF_ONE
#undef HUF_FITS
    h[0].p = p0;
    h[1].p = p1;
    h[2].p = p2;
    h[3].p = p3;
    for (int k = 0; k < 4; k++) {
        h[k].i = i;
        int r = huf_finish(c, &h[k], out + k * seg, k < 3 ? seg : last);
        if (r) return r;
    }
    return 0;
}

// ---- the scan ------------------------------------------------------------------------

// The literals section's header at s (the block's len bytes); a tree
// description is sized and copied, the last one given to a treeless section.
static int scan_literals(zs_frame *f, const uint8_t *s, size_t len, zs_block_tables *t, size_t *used) {
    if (len < 2) return FAIL(ZS_ERR_CORRUPT);
    unsigned type = s[0] & 3, sf = (s[0] >> 2) & 3;
    size_t lh, n;
    if (type <= 1) {  // raw, RLE
        switch (sf) {
        case 1:
            lh = 2;
            n = rd16(s) >> 4;
            break;
        case 3:
            lh = 3;
            if (len < 3) return FAIL(ZS_ERR_CORRUPT);
            n = rd24(s) >> 4;
            break;
        default:
            lh = 1;
            n = s[0] >> 3;
        }
        if (n > f->h.block_max) return FAIL(ZS_ERR_CORRUPT);
        if (type == 0) {
            if (lh + n > len) return FAIL(ZS_ERR_CORRUPT);
            *used = lh + n;
        } else {
            if (lh + 1 > len) return FAIL(ZS_ERR_CORRUPT);
            *used = lh + 1;
        }
        t->lit_type = (uint8_t)type;
        t->nlits = (uint32_t)n;
        t->lit_off = (uint32_t)lh;
        return 0;
    }
    // Huffman: 2 = a tree described, 3 = the last one ("treeless").
    if (len < 5) return FAIL(ZS_ERR_CORRUPT);
    size_t csize;
    int four = sf != 0;
    uint32_t h = rd32(s);
    switch (sf) {
    case 0:
    case 1:
        lh = 3;
        n = (h >> 4) & 0x3FF;
        csize = (h >> 14) & 0x3FF;
        break;
    case 2:
        lh = 4;
        n = (h >> 4) & 0x3FFF;
        csize = h >> 18;
        break;
    default:
        lh = 5;
        n = (h >> 4) & 0x3FFFF;
        csize = (h >> 22) | ((size_t)s[4] << 10);
    }
    if (n > f->h.block_max) return FAIL(ZS_ERR_CORRUPT);
    if (four && n < 6) return FAIL(ZS_ERR_CORRUPT);
    if (lh + csize > len) return FAIL(ZS_ERR_CORRUPT);
    if (type == 3 && !f->have_huf) return FAIL(ZS_ERR_CORRUPT);
    size_t tl = 0;
    if (type == 2) {
        // The description's size is in its first byte: 4-bit weights, or
        // that many bytes of FSE-coded ones. Phase 1 decodes it.
        if (csize == 0) return FAIL(ZS_ERR_CORRUPT);
        unsigned hb = s[lh];
        tl = hb >= 128 ? (hb - 127 + 1) / 2 + 1 : (size_t)hb + 1;
        if (tl >= csize) return FAIL(ZS_ERR_CORRUPT);  // no room for a stream
        f->huf.serial = new_serial();
        f->huf.len = (uint32_t)tl;
        memcpy(f->huf.bytes, s + lh, tl);
        memset(f->huf.bytes + tl, 0, 8);
        f->have_huf = 1;
    }
    t->huf.serial = f->huf.serial;
    t->huf.len = f->huf.len;
    memcpy(t->huf.bytes, f->huf.bytes, f->huf.len + 8);
    t->lit_type = 2;
    t->four = (uint8_t)four;
    t->nlits = (uint32_t)n;
    t->lit_off = (uint32_t)(lh + tl);
    t->lit_len = (uint32_t)(csize - tl);
    *used = lh + csize;
    return 0;
}

// One of the three tables of a sequences section, by its mode, into f->seq.
static int scan_seq_mode(zs_frame *f, unsigned mode, int which, const uint8_t *s, size_t len, size_t *used) {
    static const unsigned maxs[3] = {LL_MAX, OF_MAX, ML_MAX};
    static const unsigned maxlog[3] = {LL_LOG_MAX, OF_LOG_MAX, ML_LOG_MAX};
    seq_desc *d = &f->seq[which];
    *used = 0;
    switch (mode) {
    case 0:  // predefined
        d->mode = SEQ_PREDEFINED;
        return 0;
    case 1: {  // RLE: one symbol, a table of one state that reads no bits
        if (len < 1) return FAIL(ZS_ERR_CORRUPT);
        unsigned sy = s[0];
        if (sy > maxs[which]) return FAIL(ZS_ERR_CORRUPT);
        d->mode = SEQ_RLE;
        d->sym = (uint8_t)sy;
        *used = 1;
        return 0;
    }
    case 2: {  // FSE table description: read here (its size), spread by phase 1
        int16_t norm[ML_MAX + 1];
        unsigned maxsym = maxs[which], log;
        int r = read_ncount(norm, &maxsym, &log, s, len, used);
        if (r) return r;
        if (log > maxlog[which]) return FAIL(ZS_ERR_CORRUPT);
        d->mode = SEQ_FSE;
        d->log = (uint8_t)log;
        d->nsym = (uint8_t)(maxsym + 1);
        memcpy(d->norm, norm, (maxsym + 1) * sizeof(norm[0]));
        d->serial = new_serial();
        return 0;
    }
    default:  // repeat: the last tables of a block with sequences
        if (!f->have_seq) return FAIL(ZS_ERR_CORRUPT);
        return 0;
    }
}

// The sequences section's header at s (the block's rest, `base` bytes into
// it) and its table descriptions.
static int scan_sequences(zs_frame *f, const uint8_t *s, size_t len, zs_block_tables *t, size_t base) {
    if (len < 1) return FAIL(ZS_ERR_CORRUPT);
    size_t n = s[0], pos = 1;
    t->nseqs = 0;
    if (n == 0) return len != 1 ? FAIL(ZS_ERR_CORRUPT) : 0;
    if (n == 255) {
        if (len < 3) return FAIL(ZS_ERR_CORRUPT);
        n = rd16(s + 1) + 0x7F00;
        pos = 3;
    } else if (n >= 128) {
        if (len < 2) return FAIL(ZS_ERR_CORRUPT);
        n = ((n - 128) << 8) + s[1];
        pos = 2;
    }
    if (pos + 1 > len) return FAIL(ZS_ERR_CORRUPT);
    unsigned modes = s[pos++];
    for (int which = 0; which < 3; which++) {
        size_t used;
        int r = scan_seq_mode(f, (modes >> (6 - 2 * which)) & 3, which, s + pos, len - pos, &used);
        if (r) return r;
        pos += used;
    }
    if (n == 0) return 0;  // a count of 0 in the long form: tables read, the rest ignored
    f->have_seq = 1;
    if (n > f->h.block_max / 3) return FAIL(ZS_ERR_CORRUPT);  // 3 bytes a sequence at least
    t->nseqs = (uint32_t)n;
    t->seq_off = (uint32_t)(base + pos);
    for (int which = 0; which < 3; which++) {
        const seq_desc *d = &f->seq[which];
        seq_desc *o = &t->seq[which];
        o->serial = d->serial;
        o->mode = d->mode;
        o->sym = d->sym;
        o->log = d->log;
        o->nsym = d->nsym;
        if (d->mode == SEQ_FSE) memcpy(o->norm, d->norm, d->nsym * sizeof(d->norm[0]));
    }
    return 0;
}

// ---- phase 1 ---------------------------------------------------------------------

static inline __attribute__((always_inline)) int decode_literals(zs_dctx *c, zs_block *b) {
    const zs_block_tables *t = b->t;
    const uint8_t *p = b->src + t->lit_off;
    size_t n = t->nlits;
    if (t->lit_type == 0) {
        memcpy(b->lits, p, n);
    } else if (t->lit_type == 1) {
        memset(b->lits, p[0], n);
    } else {
        int r = huf_build(c, &t->huf);
        if (r) return r;
        size_t csize = t->lit_len;
        size_t avail = b->src_size - t->lit_off;  // the block's bytes from p: whole-word loads stay in them
        if (!t->four) {
            huf_st h;
            r = huf_start(&h, p, csize, avail);
            if (!r) r = huf_finish(c, &h, b->lits, n);
        } else {
            if (csize < 10) return FAIL(ZS_ERR_CORRUPT);
            size_t l1 = rd16(p), l2 = rd16(p + 2), l3 = rd16(p + 4);
            if (6 + l1 + l2 + l3 > csize) return FAIL(ZS_ERR_CORRUPT);
            size_t l4 = csize - 6 - l1 - l2 - l3, seg = (n + 3) / 4;
            if (3 * seg > n) return FAIL(ZS_ERR_CORRUPT);
            const size_t lens[4] = {l1, l2, l3, l4};
            r = huf_4streams(c, b->lits, n, seg, p + 6, lens, avail - 6);
        }
        if (r) return r;
    }
    b->nlits = (uint32_t)n;
    return 0;
}

// The table of one of the three kinds a block's description gives: the
// predefined one, one state (RLE), or c's spread of the description.
static int seq_build(zs_dctx *c, int which, const seq_desc *d, const seq_cell **table, unsigned *log) {
    const uint32_t *base = which == 0 ? ll_base : which == 2 ? ml_base : NULL;
    const uint8_t *bits = which == 0 ? ll_bits : which == 2 ? ml_bits : NULL;
    switch (d->mode) {
    case SEQ_PREDEFINED:
        *table = which == 0 ? c->ll_def : which == 1 ? c->of_def : c->ml_def;
        *log = which == 1 ? 5 : 6;
        return 0;
    case SEQ_RLE: {
        seq_cell *t = &c->rle[which];
        t->nb = 0;
        t->next = 0;
        t->base = base ? base[d->sym] : 1u << d->sym;
        t->extra = bits ? bits[d->sym] : d->sym;
        *table = t;
        *log = 0;
        return 0;
    }
    default:
        if (c->seq_serial[which] != d->serial) {
            c->seq_serial[which] = 0;
            int r = seq_table(c->fse[which], d->norm, d->nsym, d->log, base, bits);
            if (r) return r;
            c->seq_serial[which] = d->serial;
        }
        *table = c->fse[which];
        *log = d->log;
        return 0;
    }
}

// A repeat offset the block does not know yet: one of the three it starts
// with (bits 32-33), less `d` (bits 0-31: Repeated_Offset1 - 1, applied d
// times, each read as 1 when it gives 0). Above any offset.
#define SYM_REP (1ull << 63)
static inline uint64_t rep_minus1(uint64_t r) {
    if (r & SYM_REP) return r + 1;
    r -= 1;
    return r + (r == 0);  // libzstd reads a repeat offset of 0 as 1
}

// The sequences bitstream into b->seqs, every bound checked that the block
// alone sets. The repeat offsets are resolved here from SYM_REP values of the
// three the block starts with: after three new offsets no sequence needs
// them, and phase 2 resolves the few that do (ZS_SEQ_EARLY), and checks
// their offsets and the block's reach (the offsets resolved here, checked
// against the block's own output).
static inline __attribute__((always_inline)) int decode_sequences(zs_dctx *c, zs_block *b) {
    zs_block_tables *t = b->t;
    size_t n = t->nseqs;
    t->reach = 0;
    t->early_end = 0;
    t->rep_out[0] = SYM_REP | 0ull << 32;
    t->rep_out[1] = SYM_REP | 1ull << 32;
    t->rep_out[2] = SYM_REP | 2ull << 32;
    if (n == 0) {
        b->size = b->nlits;
        return 0;
    }
    const seq_cell *llt, *oft, *mlt;
    unsigned ll_log, of_log, ml_log;
    int r = seq_build(c, 0, &t->seq[0], &llt, &ll_log);
    if (!r) r = seq_build(c, 1, &t->seq[1], &oft, &of_log);
    if (!r) r = seq_build(c, 2, &t->seq[2], &mlt, &ml_log);
    if (r) return r;
    const uint8_t *s = b->src + t->seq_off;
    size_t len = b->src_size - t->seq_off;
    bwd_t bs;
    if (bwd_init(&bs, s, len, len)) return FAIL(ZS_ERR_CORRUPT);
    uint32_t sll = bwd_read(&bs, ll_log);
    uint32_t sof = bwd_read(&bs, of_log);
    uint32_t sml = bwd_read(&bs, ml_log);
    uint64_t r0 = t->rep_out[0], r1 = t->rep_out[1], r2 = t->rep_out[2];
    // The literals the sequences take, and the bytes they make, are checked
    // once after them: both only grow, and none is used before phase 2.
    uint64_t out = 0;
    int64_t reach = 0;
    zs_seq *const q0 = b->seqs, *const qe = q0 + n;
    zs_seq *q = q0;  // a pointer, not an index: one register less in the loop
    // One sequence: offset extra bits, match length's, literal length's, then
    // the three states (libzstd updates them after the last sequence too).
    // READ_EXTRA(nb) with nb >= 1, READ_STATE(nb) with nb >= 0.
#define SEQUENCE(READ_EXTRA, READ_STATE, REFILL)                                  \
    {                                                                            \
        seq_cell cl = llt[sll], co = oft[sof], cm = mlt[sml];                    \
        uint64_t off;                                                            \
        if (co.extra > 1) {                                                      \
            off = (uint64_t)co.base + READ_EXTRA(co.extra) - 3;                  \
            r2 = r1;                                                             \
            r1 = r0;                                                             \
            r0 = off;                                                            \
        } else {                                                                 \
            unsigned ll0 = cl.base == 0;                                         \
            if (co.extra == 0) {                                                 \
                off = ll0 ? r1 : r0;                                             \
                if (ll0) {                                                       \
                    r1 = r0;                                                     \
                    r0 = off;                                                    \
                }                                                                \
            } else {                                                             \
                unsigned k = 1 + ll0 + READ_EXTRA(1);                            \
                uint64_t v = k == 3 ? rep_minus1(r0) : k == 2 ? r2 : r1;         \
                if (k != 1) r2 = r1;                                             \
                r1 = r0;                                                         \
                r0 = off = v;                                                    \
            }                                                                    \
        }                                                                        \
        uint32_t ml = cm.base + (cm.extra ? READ_EXTRA(cm.extra) : 0);           \
        REFILL;                                                                  \
        uint32_t ll = cl.base + (cl.extra ? READ_EXTRA(cl.extra) : 0);           \
        sll = cl.next + READ_STATE(cl.nb);                                       \
        sml = cm.next + READ_STATE(cm.nb);                                       \
        sof = co.next + READ_STATE(co.nb);                                       \
        out += ll;                                                               \
        q->ll = ll;                                                              \
        q->ml = ml;                                                              \
        if (off & SYM_REP) { /* not known yet: phase 2 resolves it */            \
            q->ml = ml | ZS_SEQ_EARLY;                                           \
            off = (off >> 32 & 3) << 16 | (off & 0xFFFF);                        \
            t->early_end = (uint32_t)(q - q0 + 1);                               \
        } else {                                                                 \
            int64_t before = (int64_t)(off - out); /* > 0: before the block */   \
            reach = before > reach ? before : reach;                             \
        }                                                                        \
        q->off = (uint32_t)off;                                                  \
        out += ml;                                                               \
    }
    {
        // Whole-word reads while no read of the sequence can reach the
        // stream's start: a sequence reads at most 31 + 16 (then a refill)
        // + 16 + 9 + 9 + 8 bits, and a refill leaves 56 or more bits in `word`:
        // the bits are the stream's, as the careful loop below reads them.
        // (Reading the offset's and match length's extra bits in one go, and
        // the literal length's with the three states, took 3% more
        // instructions: the masks cost more than the reads they save.)
        const uint8_t *src = bs.s;
        int64_t p = bs.p, base;
        uint64_t word;
#define FAST_REFILL (base = 8 * ((p >> 3) - 7), word = rd64(src + (base >> 3)))
#define FAST_READ(nb) (p -= (nb), (uint32_t)((word >> (p - base)) & ((1ull << (nb)) - 1)))  // nb <= 31
        for (; q < qe && p >= 160; q++) {
            FAST_REFILL;
            SEQUENCE(FAST_READ, FAST_READ, FAST_REFILL)
        }
#undef FAST_READ
#undef FAST_REFILL
        bs.p = p;
    }
#define CAREFUL_EXTRA(nb) bwd_read_fast(&bs, (nb))
#define CAREFUL_STATE(nb) bwd_read(&bs, (nb))
    for (; q < qe; q++) SEQUENCE(CAREFUL_EXTRA, CAREFUL_STATE, (void)0)
#undef CAREFUL_EXTRA
#undef CAREFUL_STATE
#undef SEQUENCE
    if (bs.p > 0) return FAIL(ZS_ERR_CORRUPT);  // bits left unread
    uint64_t lit_sum = 0;  // summed here: one register less in the loop
    for (size_t k = 0; k < n; k++) lit_sum += q0[k].ll;
    if (lit_sum > b->nlits) return FAIL(ZS_ERR_CORRUPT);
    out += b->nlits - lit_sum;
    if (out > t->block_max) return FAIL(ZS_ERR_CORRUPT);
    t->rep_out[0] = r0;
    t->rep_out[1] = r1;
    t->rep_out[2] = r2;
    t->reach = (uint64_t)reach;
    b->nseqs = (uint32_t)n;
    b->size = (uint32_t)out;
    return 0;
}

// ---- the interface ---------------------------------------------------------------

#ifdef ZS_X86
static int cpu_has_bmi2(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 8 & 1);
}
#endif

zs_frame *zs_frame_create(void) { return calloc(1, sizeof(zs_frame)); }

void zs_frame_free(zs_frame *f) { free(f); }

zs_dctx *zs_dctx_create(void) {
    zs_dctx *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
#ifdef ZS_X86
    c->bmi2 = cpu_has_bmi2();
#endif
    if (seq_table(c->ll_def, ll_default, LL_MAX + 1, 6, ll_base, ll_bits) ||
        seq_table(c->ml_def, ml_default, ML_MAX + 1, 6, ml_base, ml_bits) ||
        seq_table(c->of_def, of_default, 29, 5, NULL, NULL)) {
        free(c);
        return NULL;
    }
    return c;
}

void zs_dctx_free(zs_dctx *c) { free(c); }

int zs_block_init(zs_block *b) {
    memset(b, 0, sizeof(*b));
    b->lits = calloc(ZS_BLOCK_MAX + ZS_WILDCOPY, 1);
    b->seqs = calloc(MAX_SEQS, sizeof(zs_seq));
    b->t = calloc(1, sizeof(zs_block_tables));
    if (!b->lits || !b->seqs || !b->t) {
        zs_block_free(b);
        return ZS_ERR_MEMORY;
    }
    return 0;
}

void zs_block_free(zs_block *b) {
    free(b->lits);
    free(b->seqs);
    free(b->t);
    b->lits = NULL;
    b->seqs = NULL;
    b->t = NULL;
}

int zs_frame_begin(zs_frame *f, const uint8_t *s, size_t len, zs_frame_header *out) {
    if (len < 5) return ZS_ERR_TRUNCATED;
    uint32_t magic = rd32(s);
    if (magic == 0xFD2FB51Eu || (magic >= 0xFD2FB522u && magic <= 0xFD2FB527u)) return ZS_ERR_UNSUPPORTED;
    if (magic != MAGIC) return FAIL(ZS_ERR_CORRUPT);
    unsigned fhd = s[4], did = fhd & 3, single = (fhd >> 5) & 1, fcs = fhd >> 6;
    static const unsigned did_size[4] = {0, 1, 2, 4}, fcs_size[4] = {0, 2, 4, 8};
    size_t hs = 5 + !single + did_size[did] + fcs_size[fcs] + (single && !fcs);
    if (len < hs) return ZS_ERR_TRUNCATED;
    if (fhd & 0x08) return FAIL(ZS_ERR_CORRUPT);  // reserved bit
    zs_frame_header h = {0};
    size_t pos = 5;
    if (!single) {
        unsigned wd = s[pos++], wlog = (wd >> 3) + 10;
        if (wlog > 31) return FAIL(ZS_ERR_CORRUPT);
        uint64_t base = 1ull << wlog;
        h.window_size = base + (base >> 3) * (wd & 7);
    }
    switch (did) {
    case 1:
        h.dict_id = s[pos];
        break;
    case 2:
        h.dict_id = rd16(s + pos);
        break;
    case 3:
        h.dict_id = rd32(s + pos);
        break;
    }
    pos += did_size[did];
    switch (fcs) {
    case 0:
        h.content_size = single ? s[pos] : ZS_CONTENT_SIZE_UNKNOWN;
        break;
    case 1:
        h.content_size = rd16(s + pos) + 256;
        break;
    case 2:
        h.content_size = rd32(s + pos);
        break;
    default:
        h.content_size = rd64(s + pos);
    }
    if (single) h.window_size = h.content_size;
    h.block_max = (uint32_t)(h.window_size < ZS_BLOCK_MAX ? h.window_size : ZS_BLOCK_MAX);
    h.checksum = (fhd >> 2) & 1;
    h.header_size = (uint8_t)hs;
    if (h.dict_id != 0) return ZS_ERR_UNSUPPORTED;
    f->h = h;
    {
        uint64_t w = h.window_size < 1024 ? 1024 : h.window_size;
        uint64_t ring = w + (w < ZS_BLOCK_MAX ? w : ZS_BLOCK_MAX) + ZS_BLOCK_MAX + 2 * 32;
        f->stream_end = h.content_size <= ring ? h.content_size : ZS_CONTENT_SIZE_UNKNOWN;
    }
    f->have_huf = f->have_seq = f->ended = 0;
    f->huf.serial = 0;
    f->huf.len = 0;
    for (int which = 0; which < 3; which++) f->seq[which].mode = SEQ_PREDEFINED;
    if (out) *out = h;
    return 0;
}

int zs_scan_block(zs_frame *f, const uint8_t *s, size_t len, size_t *consumed, zs_block *b) {
    if (f->ended) return FAIL(ZS_ERR_CORRUPT);
    if (len < 3) return ZS_ERR_TRUNCATED;
    uint32_t bh = rd24(s);
    unsigned type = (bh >> 1) & 3;
    size_t size = bh >> 3;
    b->last = bh & 1;
    b->size = 0;
    b->nseqs = 0;
    b->nlits = 0;
    if (type == 3) return FAIL(ZS_ERR_CORRUPT);
    size_t csize = type == 1 ? 1 : size;
    if (csize > f->h.block_max) return FAIL(ZS_ERR_CORRUPT);
    if (len - 3 < csize) return ZS_ERR_TRUNCATED;
    const uint8_t *p = s + 3;
    b->src = p;
    b->src_size = (uint32_t)csize;
    b->t->block_max = f->h.block_max;
    b->t->content_size = f->h.content_size;
    b->t->stream_end = f->stream_end;
    if (type == 0 || (type == 2 && csize == 0)) {
        // A compressed block of 0 bytes: empty, as libzstd's streaming decoder
        // takes it (its one-shot decoder and RFC 8878 want a literals section).
        b->kind = ZS_BLOCK_RAW;
        b->size = (uint32_t)size;
    } else if (type == 1) {
        if (size > f->h.block_max) return FAIL(ZS_ERR_CORRUPT);
        b->kind = ZS_BLOCK_RLE;
        b->rle_byte = p[0];
        b->size = (uint32_t)size;
    } else {
        b->kind = ZS_BLOCK_COMPRESSED;
        size_t lused;
        int r = scan_literals(f, p, csize, b->t, &lused);
        if (r) return r;
        r = scan_sequences(f, p + lused, csize - lused, b->t, lused);
        if (r) return r;
    }
    f->ended = b->last;
    *consumed = 3 + csize;
    return 0;
}

// Phase 1 compiled twice on x86-64: for the baseline, and for BMI2 (shrx,
// bzhi: a bit read in 2 instructions, not 5), which zs_dctx_create picks
// when the CPU has it, as libzstd does. On l30.3.zst: 291.4M instructions
// of phase 1 without, 252.3M with.
static inline __attribute__((always_inline)) int decode_block_body(zs_dctx *c, zs_block *b) {
    int r = decode_literals(c, b);
    if (r) return r;
    return decode_sequences(c, b);
}

static int decode_block_generic(zs_dctx *c, zs_block *b) { return decode_block_body(c, b); }

#ifdef ZS_X86
__attribute__((target("bmi2"))) static int decode_block_bmi2(zs_dctx *c, zs_block *b) {
    return decode_block_body(c, b);
}
#endif

#ifdef ZS_TRACE
// The tests: this context decodes with the baseline code, which arm64 and
// old x86-64 run (the differential harness gives it one of its two).
void zs_trace_generic(zs_dctx *c) { c->bmi2 = 0; }
#endif

// Not inlined: the phases stay apart in profiles (callgrind's inclusive costs).
__attribute__((noinline)) int zs_decode_block(zs_dctx *c, zs_block *b) {
    b->nlits = 0;
    b->nseqs = 0;
    if (b->kind != ZS_BLOCK_COMPRESSED) return 0;
#ifdef ZS_X86
    if (c->bmi2) return decode_block_bmi2(c, b);
#endif
    return decode_block_generic(c, b);
}

// Copies at least n bytes 16 at a time: up to 15 past the end, read and
// written (the buffers' ZS_WILDCOPY slack). dst - src >= 16 or src after dst + n.
static inline void wild16(uint8_t *d, const uint8_t *s, size_t n) {
    uint8_t *e = d + n;
    do {
        memcpy(d, s, 16);
        d += 16;
        s += 16;
    } while (d < e);
}

void zs_exec_begin(zs_exec *e) {
    e->produced = 0;
    e->rep[0] = 1;
    e->rep[1] = 4;
    e->rep[2] = 8;
}

// A SYM_REP value (or a ZS_SEQ_EARLY offset: the same in 18 bits) given the
// repeat offsets the block starts with.
static inline uint32_t rep_resolve(const uint32_t *in, unsigned which, uint64_t d) {
    uint32_t x = in[which];
    return x > d ? (uint32_t)(x - d) : 1;
}

// The sequences [q, qe) from op; `early`: some are ZS_SEQ_EARLY (a constant:
// the loop for the others does not test for it).
static inline __attribute__((always_inline)) int exec_seqs(const zs_seq *q, const zs_seq *qe, uint8_t **opp,
                                                           const uint8_t **lpp, const uint8_t *dst, uint64_t hist,
                                                           const uint32_t *in, int early) {
    uint8_t *op = *opp;
    const uint8_t *lp = *lpp;
    for (; q < qe; q++) {
        uint32_t ll = q->ll, ml = q->ml;
        size_t off = q->off;
        if (ll) wild16(op, lp, ll);
        op += ll;
        lp += ll;
        if (early && (ml & ZS_SEQ_EARLY)) {
            ml &= ~ZS_SEQ_EARLY;
            off = rep_resolve(in, (unsigned)(off >> 16), off & 0xFFFF);
            if (off > hist + (uint64_t)(op - dst)) return FAIL(ZS_ERR_CORRUPT);  // before the frame's output
        }
        const uint8_t *m = op - off;
        if (off >= 16) {
            wild16(op, m, ml);
            op += ml;
        } else {
            // The match overlaps itself: copy its first period, which doubles
            // the distance to copy from (the bytes repeat every `off`).
            uint8_t *d = op, *end = op + ml;
            while ((size_t)(d - m) < 16 && d < end) {
                size_t k = (size_t)(d - m);
                if (k > (size_t)(end - d)) k = (size_t)(end - d);
                memcpy(d, m, k);
                d += k;
            }
            if (d < end) wild16(d, m, (size_t)(end - d));  // d - m >= 16, a multiple of off
            op = end;
        }
    }
    *opp = op;
    *lpp = lp;
    return 0;
}

__attribute__((noinline)) int zs_execute(zs_exec *e, const zs_block *b, uint8_t *dst, uint64_t hist) {
    // A block past the content size, when libzstd's streaming output buffer
    // is the content size (zs_frame's stream_end): libzstd refuses that
    // block, not the last, with dstSize_tooSmall, first of its checks for a
    // raw or RLE block and for a compressed block whose other parts are
    // sound. Checked before anything else here so that a caller writing
    // each block as it is executed writes no byte past it, not the
    // megabytes a frame declaring less than it holds would give. (A block
    // past the frame's block_max is the scan's or phase 1's ZS_ERR_CORRUPT
    // already, where libzstd may say dstSize_tooSmall: same block, other
    // name.)
    if (e->produced + b->size > b->t->stream_end) return FAIL(ZS_ERR_DST_SIZE);
    // The content size is the last block's error, not the frame end's: libzstd's
    // streaming decoder checks it as it ends the last block
    // (ZSTD_decompressContinue, zstd_decompress.c, 1.5.4:1351) and returns
    // the error for that block, none of its bytes. A caller writing each block
    // as it is executed writes no more. (zs_frame_end checks it again, for a
    // caller that did not execute the last block here.)
    if (b->last && b->t->content_size != ZS_CONTENT_SIZE_UNKNOWN && e->produced + b->size != b->t->content_size)
        return FAIL(ZS_ERR_CORRUPT);
    if (b->kind == ZS_BLOCK_RAW) {
        memcpy(dst, b->src, b->size);
    } else if (b->kind == ZS_BLOCK_RLE) {
        memset(dst, b->rle_byte, b->size);
    } else {
        const zs_block_tables *t = b->t;
        // Every offset phase 1 resolved, at once: the farthest reaches
        // t->reach bytes before the block.
        if (t->reach > hist) return FAIL(ZS_ERR_CORRUPT);
        uint8_t *op = dst;
        const uint8_t *lp = b->lits;
        const zs_seq *q = b->seqs, *qe = q + b->nseqs, *qx = q + t->early_end;
        int r = exec_seqs(q, qx, &op, &lp, dst, hist, e->rep, 1);
        if (r) return r;
        exec_seqs(qx, qe, &op, &lp, dst, hist, e->rep, 0);
        memcpy(op, lp, b->nlits - (size_t)(lp - b->lits));
        uint32_t in[3] = {e->rep[0], e->rep[1], e->rep[2]};
        for (int k = 0; k < 3; k++) {
            uint64_t v = t->rep_out[k];
            e->rep[k] = v & SYM_REP ? rep_resolve(in, (unsigned)(v >> 32 & 3), v & 0xFFFFFFFFu) : (uint32_t)v;
        }
    }
    e->produced += b->size;
    return 0;
}

int zs_frame_end(zs_frame *f, uint64_t produced, uint64_t hash, const uint8_t *s, size_t len, size_t *consumed) {
    *consumed = 0;
    if (!f->ended) return FAIL(ZS_ERR_CORRUPT);
    if (f->h.content_size != ZS_CONTENT_SIZE_UNKNOWN && produced != f->h.content_size) return FAIL(ZS_ERR_CORRUPT);
    if (f->h.checksum) {
        if (len < 4) return ZS_ERR_TRUNCATED;
        if (rd32(s) != (uint32_t)hash) return ZS_ERR_CHECKSUM;
        *consumed = 4;
    }
    return 0;
}

int zs_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, size_t *out_len) {
    zs_frame *f = zs_frame_create();
    zs_dctx *c = zs_dctx_create();
    zs_block b;
    size_t pos = 0, out = 0;
    int r = 0;
    *out_len = 0;
    if (!f || !c || zs_block_init(&b)) {
        zs_frame_free(f);
        zs_dctx_free(c);
        return ZS_ERR_MEMORY;
    }
    XXH64_state_t *xs = XXH64_createState();
    if (!xs) r = ZS_ERR_MEMORY;
    while (!r && pos < len) {
        if (len - pos < 5) {
            r = ZS_ERR_TRUNCATED;
            break;
        }
        uint32_t magic = rd32(src + pos);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {  // skippable frame
            if (len - pos < 8) {
                r = ZS_ERR_TRUNCATED;
                break;
            }
            uint64_t sz = rd32(src + pos + 4);
            if (sz > len - pos - 8) {
                r = ZS_ERR_TRUNCATED;
                break;
            }
            pos += 8 + sz;
            continue;
        }
        zs_frame_header h;
        r = zs_frame_begin(f, src + pos, len - pos, &h);
        if (r) break;
        pos += h.header_size;
        zs_exec e;
        zs_exec_begin(&e);
        XXH64_reset(xs, 0);
        for (;;) {
            size_t used;
            r = zs_scan_block(f, src + pos, len - pos, &used, &b);
            if (r) break;
            pos += used;
            r = zs_decode_block(c, &b);
            if (r) break;
            if (b.size > cap - out) {
                r = ZS_ERR_DST_SIZE;
                break;
            }
            r = zs_execute(&e, &b, dst + out, e.produced);
            if (r) break;
            if (h.checksum) XXH64_update(xs, dst + out, b.size);
            out += b.size;
            if (b.last) break;
        }
        if (r) break;
        size_t used;
        r = zs_frame_end(f, e.produced, h.checksum ? XXH64_digest(xs) : 0, src + pos, len - pos, &used);
        pos += used;
    }
    if (xs) XXH64_freeState(xs);
    zs_block_free(&b);
    zs_dctx_free(c);
    zs_frame_free(f);
    *out_len = out;
    return r;
}

size_t zs_frame_state_size(void) { return sizeof(zs_frame); }

void zs_frame_save(const zs_frame *f, void *out) { memcpy(out, f, sizeof *f); }

int zs_frame_restore(zs_frame *f, const void *in, size_t len) {
    if (len != sizeof *f) return FAIL(ZS_ERR_CORRUPT);
    zs_frame saved;
    memcpy(&saved, in, sizeof saved);
    // A state saved between blocks: not past the last block, a block maximum zs_frame_begin gives.
    if (saved.h.block_max > ZS_BLOCK_MAX || saved.ended) return FAIL(ZS_ERR_CORRUPT);
    *f = saved;
    return ZS_OK;
}

const char *zs_error_name(int code) {
    switch (code) {
    case ZS_OK:
        return "ok";
    case ZS_ERR_CORRUPT:
        return "corrupt";
    case ZS_ERR_TRUNCATED:
        return "truncated";
    case ZS_ERR_UNSUPPORTED:
        return "unsupported";
    case ZS_ERR_DST_SIZE:
        return "output too large";
    case ZS_ERR_CHECKSUM:
        return "checksum";
    case ZS_ERR_MEMORY:
        return "memory";
    default:
        return "unknown";
    }
}
