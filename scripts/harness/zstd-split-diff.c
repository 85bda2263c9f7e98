// The differential check of Sources/CZstdSplit (the two-phase decoder)
// against libzstd, built and run by scripts/harness/zstd-split-check.
//
//   zstd-split-diff gen [SEED]        frames libzstd makes over a sweep of
//                                     parameters, each decoded by both (and by the
//                                     threaded decoder, against zsplit in order)
//   zstd-split-diff file LEVEL FILE   FILE compressed at LEVEL ("long" = -19
//                                     --long=27), decoded by both
//   zstd-split-diff overrun [SEED]    frames declaring a content size smaller than their
//                                     blocks hold (raw, RLE, libzstd's), single-segment or
//                                     not: the same block and class of error in both
//   zstd-split-diff check FILE.zst    one compressed file, decoded by both (a damaged one,
//                                     as fuzz-one: where each fails)
//   zstd-split-diff fuzz-one FILE     one (possibly damaged) input, the oracle below
//                                     (built with -DZSPLIT_FUZZ: the libFuzzer target)
//   zstd-split-diff flips FILE.zst N [SEED]   N copies of FILE.zst with one random bit
//                                     flipped each (past the frame header), the oracle on
//                                     each: where each decoder fails
//   zstd-split-diff bench FILE.zst MODE [RUNS]   RUNS decodes (default 1), for callgrind and
//                                     perf stat; MODE: zsplit1, zsplit2 (the threaded decoder
//                                     below on 1 or 2 threads), zsplit-buf (zs_decompress into
//                                     one buffer), libzstd (ZSTD_decompressStream, 128 KiB
//                                     output buffer), libzstd1 (ZSTD_decompress, one buffer)
//   zstd-split-diff benchcmp FILE.zst RUNS   libzstd, zsplit1 and zsplit2 in turn, RUNS
//                                     rounds in one process: wall-clock and CPU medians, the
//                                     ratios, and which thread took which phase of how many blocks;
//                                     ZSPLIT_BENCH_ROUNDS=1 prints every round too
//   zstd-split-diff benchpair FILE.zst RUNS  the control: two independent one-thread decodes
//                                     at once against one alone (zsplit1, then libzstd)
//   zstd-split-diff mtcheck FILE.zst  the threaded decoder on 2 threads against libzstd
//
// The oracle: libzstd's buffer-less streaming decoder
// (ZSTD_decompressBegin/ZSTD_decompressContinue, what ZSTD_decompressStream
// drives): the same bytes on success, and success or failure alike. Its
// block limits are RFC 8878's; ZSTD_decompress (one shot) skips them, so
// it is compared too, on the frames libzstd makes, where both must agree.
// One check of ZSTD_decompress is added to the oracle: a frame's content
// size, which ZSTD_decompressContinue skips when the last block is empty.
// zsplit decodes every input twice: block after block (zs_decompress), and
// as a parallel caller drives it (shuffled_decompress: the scan ahead, phase
// 1 in a shuffled order on two contexts, phase 2 in order); both must be
// libzstd's reading.
#define _GNU_SOURCE
#define ZSTD_STATIC_LINKING_ONLY
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "zsplit.h"

#define FUZZ_CAP (8u << 20)

// libzstd's streaming decoder over every frame of src into dst (cap bytes,
// and 128 KiB more it may use as scratch: a capacity error is reported as
// 2). Returns 0 on success, 1 on an error, 2 when the output passes cap.
// *out_len gets the content of the blocks ZSTD_decompressContinue returned,
// on an error too: libzstd's error is in the block after them, and weir
// writes no further. (ZSTD_decompressStream may report a block less: on an
// error it leaves output->pos where it was before the call, the bytes it
// flushed in that call not counted, zstd_decompress.c 1.5.4:2225, 2259,
// 2293; `zstd -d` then writes a block less, by how its input falls.)
// Each block gets the room ZSTD_decompressStream's output buffer leaves it:
// ZSTD_decodingBufferSize_min(window, content size) bytes (1.5.4:2181, the
// window at least 1 KiB, 2174), a block written where the last one ended,
// back to its start when a block_max no longer fits and the buffer is
// smaller than the content size (2273): a frame whose buffer is its content
// size and whose blocks pass it fails in the block that passes it, with
// dstSize_tooSmall. ref_dst: the error was that one (1 returned).
static int ref_dst;
static int ref_decode(ZSTD_DCtx *d, const uint8_t *src, size_t len, uint8_t *dst, size_t cap, size_t *out_len) {
    size_t pos = 0;
    size_t *out = out_len;
    *out = 0;
    ref_dst = 0;
    while (pos < len) {
        if (ZSTD_isError(ZSTD_decompressBegin(d))) return 1;
        ZSTD_frameHeader fh;
        size_t frame_out = *out;
        if (ZSTD_getFrameHeader(&fh, src + pos, len - pos) != 0) fh.frameContentSize = ZSTD_CONTENTSIZE_UNKNOWN;
        // The stream's output buffer (none for a skippable frame or a bad header).
        unsigned long long obuf = ULLONG_MAX, ostart = 0;
        if (fh.frameType == ZSTD_frame && fh.windowSize != 0) {
            unsigned long long w = fh.windowSize < 1024 ? 1024 : fh.windowSize;
            size_t m = ZSTD_decodingBufferSize_min(w, fh.frameContentSize);
            if (!ZSTD_isError(m)) obuf = m;
        }
        for (;;) {
            size_t need = ZSTD_nextSrcSizeToDecompress(d);
            if (need == 0) break;
            if (need > len - pos) return 1;
            size_t room = cap + (128u << 10) - *out;
            int stream_room = obuf - ostart <= room;
            if (stream_room) room = (size_t)(obuf - ostart);
            size_t r = ZSTD_decompressContinue(d, dst + *out, room, src + pos, need);
            if (ZSTD_isError(r)) {
                if (ZSTD_getErrorCode(r) != ZSTD_error_dstSize_tooSmall) return 1;
                if (!stream_room) return 2;
                ref_dst = 1;
                return 1;
            }
            pos += need;
            *out += r;
            if (*out > cap) return 2;
            if (r && obuf != ULLONG_MAX) {
                ostart += r;
                if (obuf < fh.frameContentSize && ostart + fh.blockSizeMax > obuf) ostart = 0;
            }
        }
        // ZSTD_decompressContinue skips the content size check after an
        // empty last block; ZSTD_decompress and RFC 8878 make it.
        if (fh.frameType == ZSTD_frame && fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN &&
            *out - frame_out != fh.frameContentSize)
            return 1;
    }
    return 0;
}

static ZSTD_DCtx *dctx;
static uint8_t *ref_buf, *our_buf, *shuf_buf;
static size_t buf_cap;

static void ensure(size_t cap) {
    if (cap <= buf_cap) return;
    free(ref_buf);
    free(our_buf);
    free(shuf_buf);
    ref_buf = malloc(cap + (128u << 10) + 64);
    our_buf = malloc(cap + ZS_WILDCOPY + 64);
    shuf_buf = malloc(cap + ZS_WILDCOPY + 64);
    if (!ref_buf || !our_buf || !shuf_buf) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    buf_cap = cap;
}

static long n_same_ok, n_same_err, n_skipped, n_diff, n_huf_end;
// Where both fail: zsplit past libzstd's error (a difference: weir would
// write blocks libzstd rejects), or before it (allowed: weir writes less).
static long n_past, n_before;
// Where both fail in the same block: libzstd's dstSize_tooSmall (its stream
// buffer, the content size) and zsplit's ZS_ERR_DST_SIZE go together, and
// any other error with any other. n_class: they do not (a difference under
// strict_class, the overrun mode; else counted: a damaged block libzstd
// finds too large before it finds it damaged, or past block_max).
static long n_class_same, n_class;
static int strict_class;
// The last compare's readings, for `check`.
static int last_ref, last_ours, last_skipped;
static size_t last_ref_len, last_our_len;
static int say_before;  // flips: name each input zsplit stops on before libzstd
#ifdef ZS_TRACE
extern int zs_trace_line, zs_trace_huf_end;
void zs_trace_generic(zs_dctx *c);
#else
static int zs_trace_line, zs_trace_huf_end;  // the decoder built without its trace
#endif

// The API as a parallel caller drives it, on one thread: the scan runs up to
// SHUF_AHEAD blocks ahead, phase 1 decodes them in a shuffled order on two
// contexts at random (one with phase 1's baseline build, under ZS_TRACE),
// phase 2 executes them in order; the first error in the frame's order is
// the result. Must read every input as zs_decompress does.
#define SHUF_AHEAD 8
#define SHUF_CAP (-100)  // shuffled_decompress: past the checker's cap
static int shuffled_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t cap, size_t *out_len) {
    static zs_frame *f;
    static zs_dctx *ctx[2];
    static zs_block blk[SHUF_AHEAD];
    static XXH64_state_t *xs;
    if (!f) {
        f = zs_frame_create();
        ctx[0] = zs_dctx_create();
        ctx[1] = zs_dctx_create();
#ifdef ZS_TRACE
        if (ctx[1]) zs_trace_generic(ctx[1]);  // phase 1's baseline build; zs_decompress's may be BMI2's
#endif
        xs = XXH64_createState();
        for (int i = 0; i < SHUF_AHEAD; i++)
            if (zs_block_init(&blk[i])) f = NULL;
        if (!f || !ctx[0] || !ctx[1] || !xs) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    uint64_t mix = len * 0x9E3779B97F4A7C15ull + 7;
    size_t pos = 0, out = 0;
    int r = 0;
    *out_len = 0;
    while (!r && pos < len) {
        if (len - pos < 5) {
            r = ZS_ERR_TRUNCATED;
            break;
        }
        uint32_t magic;
        memcpy(&magic, src + pos, 4);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {  // skippable frame
            uint32_t sz;
            if (len - pos < 8) {
                r = ZS_ERR_TRUNCATED;
                break;
            }
            memcpy(&sz, src + pos + 4, 4);
            if (sz > len - pos - 8) {
                r = ZS_ERR_TRUNCATED;
                break;
            }
            pos += 8 + (size_t)sz;
            continue;
        }
        zs_frame_header h;
        r = zs_frame_begin(f, src + pos, len - pos, &h);
        if (r) break;
        pos += h.header_size;
        zs_exec e;
        zs_exec_begin(&e);
        XXH64_reset(xs, 0);
        int last = 0;
        while (!r && !last) {
            int k = 0, scan_err = 0, err[SHUF_AHEAD], order[SHUF_AHEAD];
            while (k < SHUF_AHEAD) {
                size_t used;
                scan_err = zs_scan_block(f, src + pos, len - pos, &used, &blk[k]);
                if (scan_err) break;
                pos += used;
                if (blk[k++].last) break;
            }
            for (int i = 0; i < k; i++) order[i] = i;
            for (int i = k - 1; i > 0; i--) {
                mix ^= mix << 13;
                mix ^= mix >> 7;
                mix ^= mix << 17;
                int j = (int)(mix % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i = 0; i < k; i++) err[order[i]] = zs_decode_block(ctx[(mix >> (i + 20)) & 1], &blk[order[i]]);
            for (int i = 0; i < k && !r; i++) {
                zs_block *b = &blk[i];
                if ((r = err[i])) break;
                if (b->size > cap - out) {
                    r = SHUF_CAP;  // not zs_execute's ZS_ERR_DST_SIZE
                    break;
                }
                if ((r = zs_execute(&e, b, dst + out, e.produced))) break;
                if (h.checksum) XXH64_update(xs, dst + out, b->size);
                out += b->size;
                last = b->last;
            }
            if (!r && !last) r = scan_err;
        }
        if (r) break;
        size_t used;
        r = zs_frame_end(f, e.produced, h.checksum ? XXH64_digest(xs) : 0, src + pos, len - pos, &used);
        pos += used;
    }
    *out_len = out;
    return r;
}

// Both decoders on src; returns 0 when they agree. `valid`: libzstd made src,
// so both must succeed, and ZSTD_decompress must give the same bytes.
static int compare(const uint8_t *src, size_t len, size_t cap, int valid, const char *what) {
    ensure(cap);
    size_t ref_len, our_len;
    int ref = ref_decode(dctx, src, len, ref_buf, cap, &ref_len);
    int ours = zs_decompress(src, len, our_buf, cap, &our_len);
    size_t shuf_len;
    int shuf = shuffled_decompress(src, len, shuf_buf, cap, &shuf_len);
    last_ref = ref;
    last_ours = ours;
    last_skipped = 0;
    last_ref_len = ref_len;
    last_our_len = our_len;
    if (shuf != SHUF_CAP && (shuf == ZS_ERR_DST_SIZE) != (ours == ZS_ERR_DST_SIZE)) {
        // zs_decompress checks the cap before zs_execute as shuffled_decompress
        // does: past it, both stop there; else zs_execute's refusal in both.
        fprintf(stderr, "zsplit in a shuffled order: %s (%zu bytes), in order: %s\n", zs_error_name(shuf), shuf_len,
                zs_error_name(ours));
        goto bad;
    }
    if ((shuf == 0) != (ours == 0) || (ours == 0 && (shuf_len != our_len || memcmp(shuf_buf, our_buf, our_len)))) {
        fprintf(stderr, "zsplit in a shuffled order: %s (%zu bytes), in order: %s\n", zs_error_name(shuf), shuf_len,
                zs_error_name(ours));
        goto bad;
    }
    // zs_decompress's ZS_ERR_DST_SIZE is its cap or zs_execute's content
    // size; shuffled_decompress tells them apart (SHUF_CAP).
    if (ref == 2 || shuf == SHUF_CAP || ours == ZS_ERR_UNSUPPORTED) {
        n_skipped++;  // past the cap, or what goes to libzstd
        last_skipped = 1;
        if (valid && ours == ZS_ERR_UNSUPPORTED) goto bad;
        return 0;
    }
    if (ref == 0 && ours != 0 && !valid && zs_trace_huf_end) {
        // The one class of difference left (bench/results/2026-11-29-one-frame-split.md):
        // libzstd takes a damaged Huffman stream that does not end exactly at
        // its start. Counted and reported, apart from the others.
        n_huf_end++;
        return 0;
    }
    // Where: libzstd fails after ref_len bytes of whole blocks; zsplit, in
    // order or shuffled, must have executed no more (weir's promise: nothing
    // written past the block where libzstd reports its error). Less is
    // allowed, and counted: a check libzstd does not make (the Huffman
    // stream ends), libzstd failing later, at the checksum.
    if (ref == 1 && (our_len > ref_len || shuf_len > ref_len)) {
        n_past++;
        fprintf(stderr, "past libzstd's error: libzstd stops after %zu bytes, zsplit %s after %zu (shuffled %s after %zu)\n",
                ref_len, zs_error_name(ours), our_len, zs_error_name(shuf), shuf_len);
        goto bad;
    }
    if (ref == 1 && ours != 0 && our_len < ref_len) {
        n_before++;
        if (say_before)
            fprintf(stderr, "before libzstd's error: %s: libzstd after %zu bytes, zsplit %s after %zu (zsplit.c:%d)\n",
                    what, ref_len, zs_error_name(ours), our_len, zs_trace_line);
    }
    if (ref == 1 && ours != 0 && our_len == ref_len) {
        if (ref_dst == (ours == ZS_ERR_DST_SIZE)) {
            n_class_same++;
        } else {
            n_class++;
            fprintf(stderr, "%s: both stop after %zu bytes, libzstd %s, zsplit %s (zsplit.c:%d)\n", what, ref_len,
                    ref_dst ? "dstSize_tooSmall" : "another error", zs_error_name(ours), zs_trace_line);
            if (strict_class) goto bad;
        }
    }
    if ((ref == 0) != (ours == 0)) goto bad;
    if (ref == 0 && (ref_len != our_len || memcmp(ref_buf, our_buf, ref_len))) goto bad;
    if (valid) {
        if (ref != 0) goto bad;
        size_t one = ZSTD_decompress(ref_buf, cap, src, len);
        if (ZSTD_isError(one) || one != our_len || memcmp(ref_buf, our_buf, one)) goto bad;
    }
    if (ref == 0) n_same_ok++;
    else n_same_err++;
    return 0;
bad:
    n_diff++;
#ifndef ZSPLIT_FUZZ
    {
        static int dumped;
        char name[64];
        snprintf(name, sizeof name, "/tmp/zsplit-diff-%d.zst", dumped++);
        FILE *df = fopen(name, "wb");
        if (df) {
            fwrite(src, 1, len, df);
            fclose(df);
        }
        fprintf(stderr, "(zsplit's error at zsplit.c:%d; input in %s)\n", zs_trace_line, name);
    }
#endif
    fprintf(stderr, "DIFF %s: libzstd %s (%zu bytes), zsplit %s (%zu bytes), input %zu bytes\n", what,
            ref == 0 ? "ok" : "error", ref_len, zs_error_name(ours), our_len, len);
    return 1;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static uint64_t rng;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

// Inputs of every kind the encoder treats differently: text, random bytes,
// runs, long repeats far back, small alphabets.
static void make_input(uint8_t *b, size_t n, int kind) {
    static const char *words[] = {"the ", "frame ", "block ", "zstd ", "window ", "offset ", "literal ",
                                  "sequence ", "\n", "match ", "huffman ", "0x7f ", "{ ", "} ", "int ", "return "};
    size_t i = 0;
    switch (kind % 6) {
    case 0:  // text
        while (i < n) {
            const char *w = words[rnd() % 16];
            for (; *w && i < n; w++) b[i++] = (uint8_t)*w;
        }
        break;
    case 1:  // random
        for (; i < n; i++) b[i] = (uint8_t)rnd();
        break;
    case 2:  // runs and short random pieces
        while (i < n) {
            size_t r = rnd() % 300 + 1;
            uint8_t c = (uint8_t)(rnd() % 4 ? 0 : rnd());
            for (size_t k = 0; k < r && i < n; k++) b[i++] = rnd() % 8 ? c : (uint8_t)rnd();
        }
        break;
    case 3:  // a random piece repeated far back, with edits
    {
        size_t piece = 1 + rnd() % (n / 3 + 1);
        for (; i < piece && i < n; i++) b[i] = (uint8_t)rnd();
        for (; i < n; i++) b[i] = rnd() % 500 ? b[i - piece] : (uint8_t)rnd();
        break;
    }
    case 4:  // small alphabet, skewed
        for (; i < n; i++) b[i] = (uint8_t)("aaaabbbccd\0\0\xff"[rnd() % 13]);
        break;
    default:  // all 256 byte values, skewed: Huffman tables with FSE-coded weights
        for (; i < n; i++) {
            uint32_t r = rnd();
            b[i] = (uint8_t)((r & 0xFF) * ((r >> 8) & 0xFF) >> 8);
        }
    }
}

static size_t compress_with(ZSTD_CCtx *c, uint8_t *dst, size_t cap, const uint8_t *src, size_t n, size_t chunk) {
    ZSTD_outBuffer out = {dst, cap, 0};
    ZSTD_inBuffer in = {src, 0, 0};
    size_t done = 0;
    while (done < n) {  // flushing every chunk makes small blocks
        size_t k = n - done < chunk ? n - done : chunk;
        in.src = src + done;
        in.size = k;
        in.pos = 0;
        ZSTD_EndDirective e = done + k == n ? ZSTD_e_end : ZSTD_e_flush;
        size_t r;
        do {
            r = ZSTD_compressStream2(c, &out, &in, e);
            if (ZSTD_isError(r)) {
                fprintf(stderr, "compress: %s\n", ZSTD_getErrorName(r));
                exit(2);
            }
        } while (r != 0 || in.pos < in.size);
        done += k;
    }
    if (n == 0) {
        size_t r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(r)) exit(2);
    }
    return out.pos;
}

static int mt_vs_ours(const uint8_t *src, size_t len, size_t cap, const char *what);
static long n_mt_same, n_mt_ring, n_mt_skipped;

// Checkpoints (zs_frame_save, issue 81 item 6, the mount's reads of one
// frame): a valid frame of src decoded in order, the scan's state, zs_exec
// and the block's offset saved every `step` blocks; then from each saved
// state, restored into a fresh zs_frame and decoded on a fresh zs_dctx into
// a buffer that holds only the window's last bytes (libzstd's) before it,
// to the frame's end: exactly libzstd's bytes from there (ref, ref_len).
// Frames the saved states cannot be made of (not one frame, or not one
// zsplit takes) are counted as skipped.
static long n_ckpt, n_ckpt_skipped;
typedef struct {
    size_t pos;
    zs_exec e;
    uint8_t *state;
} ckpt_t;
static int ckpt_check(const uint8_t *src, size_t len, const uint8_t *ref, size_t ref_len, int step,
                      const char *what) {
    enum { MAX_CKPT = 48 };
    ckpt_t saved[MAX_CKPT];
    int nsaved = 0, bad = 0, blocks = 0;
    size_t state_size = zs_frame_state_size();
    zs_frame_header h;
    zs_frame *f = zs_frame_create(), *g = zs_frame_create();
    zs_dctx *c = zs_dctx_create();
    zs_block b;
    uint8_t *buf = malloc(ref_len + ZS_WILDCOPY);
    if (!f || !g || !c || !buf || zs_block_init(&b)) exit(2);
    zs_exec e;
    zs_exec_begin(&e);
    size_t pos = 0;
    if (zs_frame_begin(f, src, len, &h)) {
        n_ckpt_skipped++;
        goto done;
    }
    pos = h.header_size;
    for (;;) {
        if (blocks++ % step == 0 && nsaved < MAX_CKPT) {
            saved[nsaved].pos = pos;
            saved[nsaved].e = e;
            saved[nsaved].state = malloc(state_size);
            zs_frame_save(f, saved[nsaved].state);
            nsaved++;
        }
        size_t used;
        if (zs_scan_block(f, src + pos, len - pos, &used, &b) || zs_decode_block(c, &b) ||
            e.produced + b.size > ref_len || zs_execute(&e, &b, buf + e.produced, e.produced)) {
            n_ckpt_skipped++;  // compare() took the frame: only its tail, past one frame, is not ours
            goto done;
        }
        pos += used;
        if (b.last) break;
    }
    if (e.produced != ref_len || memcmp(buf, ref, ref_len)) {
        n_ckpt_skipped++;  // more than one frame
        goto done;
    }
    for (int k = 0; k < nsaved && !bad; k++) {
        // The saved bytes go through a copy: nothing of f's is shared.
        if (zs_frame_restore(g, saved[k].state, state_size)) {
            fprintf(stderr, "DIFF %s: checkpoint %d not restored\n", what, k);
            bad = 1;
            break;
        }
        zs_exec r = saved[k].e;
        uint64_t start = r.produced, hist = start < h.window_size ? start : h.window_size;
        uint8_t *out = malloc(hist + (ref_len - start) + ZS_WILDCOPY);
        memcpy(out, ref + start - hist, hist);
        zs_dctx *fresh = zs_dctx_create();
        size_t at = saved[k].pos;
        int status = 0;
        for (;;) {
            size_t used;
            uint64_t done_here = r.produced - start;
            status = zs_scan_block(g, src + at, len - at, &used, &b);
            if (!status) status = zs_decode_block(fresh, &b);
            if (!status && r.produced + b.size > ref_len) status = ZS_ERR_DST_SIZE;
            if (!status) {
                uint64_t back = hist + done_here, window = h.window_size;
                status = zs_execute(&r, &b, out + hist + done_here, back < window ? back : window);
            }
            if (status) break;
            at += used;
            if (b.last) break;
        }
        if (status || r.produced != ref_len || memcmp(out + hist, ref + start, ref_len - start)) {
            fprintf(stderr, "DIFF %s: from checkpoint %d (block offset %zu, content %llu): %s, %llu bytes of %zu\n",
                    what, k, saved[k].pos, (unsigned long long)start, zs_error_name(status),
                    (unsigned long long)r.produced, ref_len);
            bad = 1;
        }
        zs_dctx_free(fresh);
        free(out);
    }
    n_ckpt++;
done:
    for (int k = 0; k < nsaved; k++) free(saved[k].state);
    zs_block_free(&b);
    zs_frame_free(f);
    zs_frame_free(g);
    zs_dctx_free(c);
    free(buf);
    return bad;
}

static int gen(uint64_t seed) {
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t max = 3u << 20;
    // Room for a block header every flush (compressBound counts one per 128 KiB).
    size_t out_cap = 2 * max + (1u << 20);
    uint8_t *in = malloc(max), *out = malloc(out_cap);
    int levels[] = {-5, -3, -1, 1, 2, 3, 4, 5, 6, 7, 9, 12, 15, 16, 17, 18, 19};
    int cases = 0, bad = 0;
    for (int round = 0; round < 300; round++) {
        size_t sizes[] = {0, 1, 7, 100, 1000, 5000, 70000, 140000, 300000, 1u << 20, 3u << 20};
        size_t n = sizes[rnd() % 11];
        if (n > 100 && rnd() % 2) n -= rnd() % 100;
        int kind = (int)(rnd() % 6);
        make_input(in, n, kind);
        ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
        int level = levels[rnd() % 17];
        if (n > (1u << 20) && level > 15) level = 12;  // time: -16..19 on MBs
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, (int)(rnd() % 2));
        ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, (int)(rnd() % 2));
        char what[200];
        int wlog = 0, strat = 0, lit = 0, mm = 0, tl = 0;
        if (rnd() % 2) {
            wlog = 10 + (int)(rnd() % 18);
            ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, wlog);
        }
        if (rnd() % 3 == 0 && level > 0) {
            strat = 1 + (int)(rnd() % 9);
            ZSTD_CCtx_setParameter(c, ZSTD_c_strategy, strat);
        }
        if (rnd() % 3 == 0) {
            lit = (int)(rnd() % 3);  // auto, huffman, uncompressed
            ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, lit);
        }
        if (rnd() % 4 == 0) {
            mm = 3 + (int)(rnd() % 5);
            ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, mm);
        }
        if (rnd() % 4 == 0) {
            tl = (int)(rnd() % 1000);
            ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, tl);
        }
        if (rnd() % 5 == 0) ZSTD_CCtx_setParameter(c, ZSTD_c_useBlockSplitter, 1 + (int)(rnd() % 2));
        if (rnd() % 6 == 0) ZSTD_CCtx_setParameter(c, ZSTD_c_targetCBlockSize, 1340 + (int)(rnd() % 4000));
        size_t chunk = rnd() % 3 == 0 ? 1 + rnd() % (n > 300000 ? 100000 : 20000) : (size_t)-1;
        size_t clen = compress_with(c, out, out_cap, in, n, chunk);
        snprintf(what, sizeof what, "gen seed %llu round %d: %zu bytes kind %d level %d wlog %d strat %d lit %d "
                 "minMatch %d targetLength %d chunk %zu", (unsigned long long)seed, round, n, kind, level, wlog,
                 strat, lit, mm, tl, chunk);
        cases++;
        if (compare(out, clen, n + 1, 1, what)) bad++;
        else if (last_ref == 0 && ckpt_check(out, clen, ref_buf, last_ref_len, 1 + (int)(rnd() % 4), what)) bad++;
        if (mt_vs_ours(out, clen, n + 1, what)) bad++;
        // Damaged copies of the same frame: the same failure (or bytes).
        for (int k = 0; k < 4 && clen > 0; k++) {
            uint8_t *dmg = malloc(clen);
            memcpy(dmg, out, clen);
            int edits = 1 + (int)(rnd() % 3);
            for (int e = 0; e < edits; e++) dmg[rnd() % clen] ^= (uint8_t)(1u << (rnd() % 8));
            size_t dlen = rnd() % 5 == 0 ? rnd() % clen : clen;
            snprintf(what + strlen(what) < what + sizeof what - 20 ? what + strlen(what) : what, 20, " dmg%d", k);
            cases++;
            if (compare(dmg, dlen, n + 1 + (1u << 20), 0, what)) bad++;
            if (mt_vs_ours(dmg, dlen, n + 1 + (1u << 20), what)) bad++;
            free(dmg);
        }
    }
    printf("gen seed %llu: %d cases, %ld ok alike, %ld errors alike, %ld skipped, %d differences "
           "(%ld past libzstd's error), %ld stopped before libzstd's error, "
           "%ld Huffman stream ends libzstd takes, %ld same block but libzstd's dstSize_tooSmall not zsplit's "
           "(or not); threaded: %ld as in order, %ld past its ring, %ld skipped; "
           "checkpoints: %ld frames restored alike, %ld skipped\n",
           (unsigned long long)seed, cases, n_same_ok, n_same_err, n_skipped, bad, n_past, n_before, n_huf_end,
           n_class, n_mt_same, n_mt_ring, n_mt_skipped, n_ckpt, n_ckpt_skipped);
    ZSTD_freeCCtx(c);
    free(in);
    free(out);
    return bad != 0;
}

// Frames that declare a content size smaller than their blocks hold (a
// hostile input: issue 81's tester), made here, not by libzstd: a header
// with an 8-byte content size, single-segment or with a window of 2^wlog,
// then raw blocks, RLE blocks, or the blocks of a frame libzstd made without
// a content size. Both decoders must stop in the same block, with the same
// class of error: libzstd's dstSize_tooSmall where its stream buffer is the
// content size (zs_execute's ZS_ERR_DST_SIZE), its corruption_detected at
// the last block where the buffer is a ring smaller than that (strict_class).
static size_t overrun_header(uint8_t *o, uint64_t fcs, int single, int wlog) {
    size_t k = 0;
    o[k++] = 0x28, o[k++] = 0xB5, o[k++] = 0x2F, o[k++] = 0xFD;
    o[k++] = (uint8_t)(0xC0 | (single ? 0x20 : 0));  // 8-byte content size, no checksum
    if (!single) o[k++] = (uint8_t)((wlog - 10) << 3);
    for (int i = 0; i < 8; i++) o[k++] = (uint8_t)(fcs >> (8 * i));
    return k;
}

static size_t overrun_blocks(uint8_t *o, const uint8_t *in, size_t n, int kind, size_t bs) {
    size_t k = 0;
    for (size_t done = 0; done < n || n == 0;) {
        size_t m = n - done < bs ? n - done : bs;
        uint32_t bh = (uint32_t)(done + m == n) | (kind == 1 ? 2u : 0u) | (uint32_t)m << 3;
        o[k++] = (uint8_t)bh, o[k++] = (uint8_t)(bh >> 8), o[k++] = (uint8_t)(bh >> 16);
        if (kind == 1) {
            o[k++] = in[done];
        } else {
            memcpy(o + k, in + done, m);
            k += m;
        }
        done += m;
        if (n == 0) break;
    }
    return k;
}

static int overrun(uint64_t seed) {
    rng = seed * 0x9E3779B97F4A7C15ull + 7;
    strict_class = 1;
    size_t max = 3u << 20;
    uint8_t *in = malloc(max), *z = malloc(2 * max + (1u << 20)), *fr = malloc(4 * max + (1u << 20));  // 1-byte blocks
    ZSTD_CCtx *c = ZSTD_createCCtx();
    int cases = 0, bad = 0;
    long dst_cases = 0;
    for (int round = 0; round < 200; round++) {
        size_t sizes[] = {300, 5000, 70000, 140000, 300000, 1u << 20, 3u << 20};
        size_t n = sizes[rnd() % 7];
        int kind = (int)(rnd() % 3);  // raw, RLE, libzstd's blocks
        int single = (int)(rnd() % 2), wlog = 10 + (int)(rnd() % 18);
        size_t under[] = {1, 100, 1000, 131072, n / 2, n - 1, n + 1 /* more than it holds */};
        size_t d = under[rnd() % 7];
        uint64_t fcs = d > n ? n + 1 : n - d;
        // libzstd's blocks in a single-segment frame must fit its block_max,
        // min(content size, 128 KiB): one past it is zsplit's phase 1
        // ZS_ERR_CORRUPT, where libzstd may say dstSize_tooSmall (zs_execute).
        if (kind == 2 && single && fcs < (128u << 10)) single = 0;
        make_input(in, n, (int)(rnd() % 6));
        size_t k = overrun_header(fr, fcs, single, wlog);
        uint64_t block_max = single ? fcs : 1ull << wlog;
        if (block_max > (128u << 10)) block_max = 128u << 10;
        if (kind < 2) {
            size_t bs = 1 + rnd() % block_max;
            k += overrun_blocks(fr + k, in, n, kind, bs);
        } else {
            ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
            ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1 + (int)(rnd() % 9));
            ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
            ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
            ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, single ? 17 : wlog);
            size_t zl = ZSTD_compress2(c, z, 2 * max + (1u << 20), in, n);
            size_t hs = ZSTD_frameHeaderSize(z, zl);
            if (ZSTD_isError(zl) || ZSTD_isError(hs)) exit(2);
            memcpy(fr + k, z + hs, zl - hs);
            k += zl - hs;
        }
        char what[160];
        snprintf(what, sizeof what, "overrun seed %llu round %d: %zu bytes, content size %llu, %s wlog %d, kind %d",
                 (unsigned long long)seed, round, n, (unsigned long long)fcs, single ? "single-segment" : "window",
                 wlog, kind);
        cases++;
        long before = n_class_same;
        if (compare(fr, k, n + 1, 0, what)) bad++;
        if (n_class_same > before && ref_dst) dst_cases++;
    }
    printf("overrun seed %llu: %d cases, %ld ok alike, %ld errors alike (%ld in the same block and class, %ld "
           "of them dstSize_tooSmall), %ld skipped, %d differences (%ld past libzstd's error, %ld of another "
           "class), %ld stopped before libzstd's error\n",
           (unsigned long long)seed, cases, n_same_ok, n_same_err, n_class_same, dst_cases, n_skipped, bad, n_past,
           n_class, n_before);
    free(in);
    free(z);
    free(fr);
    ZSTD_freeCCtx(c);
    return bad != 0;
}

// N copies of a valid file, one random bit flipped in each past its first
// 20 bytes (the frame header: a flip there mostly changes the window or the
// sizes, not a block); each through the oracle as a damaged input.
static int flips(const char *path, int count, uint64_t seed) {
    size_t n;
    uint8_t *src = read_file(path, &n);
    unsigned long long size = ZSTD_getFrameContentSize(src, n);
    size_t cap = size < (1ull << 34) ? (size_t)size + 1 : (size_t)1 << 31;
    uint8_t *dmg = malloc(n);
    if (!dmg || n < 40) return 2;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    say_before = 1;
    int bad = 0;
    for (int i = 0; i < count; i++) {
        memcpy(dmg, src, n);
        size_t at = 20 + rnd() % (n - 20);
        int bit = (int)(rnd() % 8);
        dmg[at] ^= (uint8_t)(1u << bit);
        char what[300];
        snprintf(what, sizeof what, "%s, bit %d of byte %zu flipped", path, bit, at);
        if (compare(dmg, n, cap, 0, what)) bad++;
    }
    printf("%s: %d flips, %ld ok alike, %ld errors alike, %ld skipped, %d differences (%ld past libzstd's error), "
           "%ld stopped before libzstd's error, %ld Huffman stream ends libzstd takes\n",
           path, count, n_same_ok, n_same_err, n_skipped, bad, n_past, n_before, n_huf_end);
    free(dmg);
    free(src);
    return bad != 0;
}

static int mtcheck_buf(const uint8_t *src, size_t n, const char *what);

static int file_case(const char *level_s, const char *path) {
    size_t n;
    uint8_t *in = read_file(path, &n);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    int level = strcmp(level_s, "long") == 0 ? 19 : atoi(level_s);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    if (strcmp(level_s, "long") == 0) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
        ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 27);
    }
    size_t cap = ZSTD_compressBound(n);
    uint8_t *out = malloc(cap);
    size_t clen = ZSTD_compress2(c, out, cap, in, n);
    if (ZSTD_isError(clen)) return 2;
    char what[300];
    snprintf(what, sizeof what, "%s at %s", path, level_s);
    int bad = compare(out, clen, n + 1, 1, what);
    bad |= mtcheck_buf(out, clen, what);
    if (!bad) bad |= ckpt_check(out, clen, ref_buf, last_ref_len, 16, what);
    printf("%s: %zu -> %zu bytes, %s (in order, shuffled, threaded, from checkpoints)\n", what, n, clen, bad ? "DIFFERENT" : "same bytes");
    return bad;
}

// ---- the threaded decoder (bench, mtcheck) -----------------------------------------
//
// One frame on N threads through the zsplit API: the scan, phase 1 of
// different blocks on every thread, phase 2 and XXH64 in order on whichever
// thread is free. Each thread takes, in this order: phase 2 of the next
// blocks when they are decoded (one thread at a time); the scan of the next
// blocks when fewer than MT_LOW wait for phase 1 (one thread at a time);
// phase 1 of the next scanned block; the scan again; else it waits. At most
// MT_SLOTS blocks are between the scan and phase 2.
//
// The output goes into a ring of R bytes (the window, two blocks and a page,
// rounded to pages) mapped three times in a row, so that a block written at
// mid + (position mod R) and the window before it are contiguous: no copy,
// no wrap in zs_execute. As weir would, it writes nothing out; the bench
// compares it with libzstd copying into a 128 KiB buffer.
static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define MT_SLOTS 16
#define MT_LOW 2
#define MT_SCAN_BATCH 4

typedef struct {
    uint8_t *mid;  // the middle mapping: mid - R .. mid + 2R are the same R bytes thrice
    size_t size;
} ring_t;

static int ring_init(ring_t *r, uint64_t window) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t want = (size_t)window + 2 * ZS_BLOCK_MAX + page;
    size_t size = (want + page - 1) / page * page;
    if (r->mid && r->size >= size) return 0;
    if (r->mid) munmap(r->mid - r->size, 3 * r->size);
    r->mid = NULL;
    int fd = memfd_create("zsplit-ring", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size)) return -1;
    uint8_t *m = mmap(NULL, 3 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1;
    for (int i = 0; i < 3; i++)
        if (mmap(m + i * size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) return -1;
    close(fd);
    r->mid = m + size;
    r->size = size;
    return 0;
}

enum { SLOT_FREE, SLOT_SCANNED, SLOT_CLAIMED, SLOT_DECODED };

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const uint8_t *src;
    size_t len, pos;  // the scan's place in src
    zs_frame *f;
    zs_frame_header h;
    zs_dctx *ctx[8];
    zs_block b[MT_SLOTS];
    int err[MT_SLOTS], state[MT_SLOTS];
    uint64_t scan_next, claim_next, exec_next;  // block numbers
    int scan_busy, exec_busy, scan_done, finished, result;
    zs_exec e;
    XXH64_state_t *xs;
    ring_t ring;
    uint64_t blocks, waits, decoded_by[8], executed_by[8];
    // CPU time (the thread's) of phase 1 on each thread, and of phase 2 + XXH64
    // on blocks the same thread decoded ([0]) or the other did ([1])
    int dec_thread[MT_SLOTS];
    double p1_cpu[8], p2_cpu[2];
    uint64_t p2_n[2];
} mt_t;

static int mt_init(mt_t *m, int threads) {
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->f = zs_frame_create();
    m->xs = XXH64_createState();
    if (!m->f || !m->xs) return -1;
    for (int i = 0; i < threads; i++)
        if (!(m->ctx[i] = zs_dctx_create())) return -1;
    for (int i = 0; i < MT_SLOTS; i++)
        if (zs_block_init(&m->b[i])) return -1;
    return 0;
}

// The scan of up to n blocks; called and returns with m->mu held.
static void mt_scan(mt_t *m, int n) {
    m->scan_busy = 1;
    uint64_t first = m->scan_next;
    pthread_mutex_unlock(&m->mu);
    int k = 0, done = 0;
    while (k < n) {
        int slot = (int)((first + k) % MT_SLOTS);
        size_t used;
        int r = zs_scan_block(m->f, m->src + m->pos, m->len - m->pos, &used, &m->b[slot]);
        m->err[slot] = r;
        k++;
        if (r) {
            done = 1;
            break;
        }
        m->pos += used;
        if (m->b[slot].last) {
            done = 1;
            break;
        }
    }
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < k; i++) m->state[(first + i) % MT_SLOTS] = SLOT_SCANNED;
    m->scan_next = first + (uint64_t)k;
    m->scan_done |= done;
    m->scan_busy = 0;
    pthread_cond_broadcast(&m->cv);
}

// Phase 2 of the decoded blocks from exec_next on; with m->mu held.
static void mt_exec(mt_t *m, int t) {
    m->exec_busy = 1;
    uint64_t i = m->exec_next, end = i;
    while (end < m->scan_next && m->state[end % MT_SLOTS] == SLOT_DECODED) end++;
    pthread_mutex_unlock(&m->mu);
    int r = 0, fin = 0;
    for (; i < end && !fin; i++) {
        zs_block *b = &m->b[i % MT_SLOTS];
        r = m->err[i % MT_SLOTS];
        if (!r) {
            double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            uint64_t p = m->e.produced, keep = m->ring.size - ZS_RING_SLACK;
            uint8_t *dst = m->ring.mid + p % m->ring.size;
            r = zs_execute(&m->e, b, dst, p < keep ? p : keep);
            if (!r) XXH64_update(m->xs, dst, b->size);
            int cross = m->dec_thread[i % MT_SLOTS] != t;
            m->p2_cpu[cross] += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
            m->p2_n[cross]++;
        }
        fin = r || b->last;
    }
    pthread_mutex_lock(&m->mu);
    for (uint64_t j = m->exec_next; j < i; j++) m->state[j % MT_SLOTS] = SLOT_FREE;
    m->blocks += i - m->exec_next;
    m->exec_next = i;
    m->exec_busy = 0;
    if (fin) {
        m->finished = 1;
        m->result = r;
    }
    pthread_cond_broadcast(&m->cv);
}

static void mt_run(mt_t *m, int t) {
    pthread_mutex_lock(&m->mu);
    while (!m->finished) {
        if (!m->exec_busy && m->exec_next < m->scan_next && m->state[m->exec_next % MT_SLOTS] == SLOT_DECODED) {
            uint64_t before = m->blocks;
            mt_exec(m, t);
            m->executed_by[t] += m->blocks - before;
            continue;
        }
        uint64_t ready = m->scan_next - m->claim_next, room = MT_SLOTS - (m->scan_next - m->exec_next);
        int can_scan = !m->scan_busy && !m->scan_done && room > 0;
        if (can_scan && ready < MT_LOW) {
            mt_scan(m, (int)(room < MT_SCAN_BATCH ? room : MT_SCAN_BATCH));
            continue;
        }
        if (ready > 0) {
            uint64_t i = m->claim_next++;
            int slot = (int)(i % MT_SLOTS);
            m->state[slot] = SLOT_CLAIMED;
            pthread_mutex_unlock(&m->mu);
            double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            if (!m->err[slot]) m->err[slot] = zs_decode_block(m->ctx[t], &m->b[slot]);
            double c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            pthread_mutex_lock(&m->mu);
            m->dec_thread[slot] = t;
            m->p1_cpu[t] += c1 - c0;
            m->decoded_by[t]++;
            m->state[slot] = SLOT_DECODED;
            if (i == m->exec_next) pthread_cond_broadcast(&m->cv);
            continue;
        }
        if (can_scan) {
            mt_scan(m, (int)(room < MT_SCAN_BATCH ? room : MT_SCAN_BATCH));
            continue;
        }
        m->waits++;
        pthread_cond_wait(&m->cv, &m->mu);
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

typedef struct {
    mt_t *m;
    int t;
} mt_arg;

static void *mt_thread(void *p) {
    mt_arg *a = p;
    mt_run(a->m, a->t);
    return NULL;
}

// Every zstd frame of src on `threads` threads; *out_len and *hash (XXH64 of
// the whole output) for the checks.
static int mt_decode(mt_t *m, const uint8_t *src, size_t len, int threads, size_t *out_len, uint64_t *hash) {
    size_t pos = 0, out = 0;
    XXH64_state_t *all = XXH64_createState();
    XXH64_reset(all, 0);
    int r = 0;
    while (!r && pos < len) {
        r = zs_frame_begin(m->f, src + pos, len - pos, &m->h);
        if (r) break;
        if (ring_init(&m->ring, m->h.window_size)) {
            r = ZS_ERR_MEMORY;
            break;
        }
        m->src = src;
        m->len = len;
        m->pos = pos + m->h.header_size;
        m->scan_next = m->claim_next = m->exec_next = 0;
        m->scan_busy = m->exec_busy = m->scan_done = m->finished = m->result = 0;
        for (int i = 0; i < MT_SLOTS; i++) m->state[i] = SLOT_FREE;
        zs_exec_begin(&m->e);
        XXH64_reset(m->xs, 0);
        pthread_t th[8];
        mt_arg args[8];
        for (int t = 1; t < threads; t++) {
            args[t] = (mt_arg){m, t};
            pthread_create(&th[t], NULL, mt_thread, &args[t]);
        }
        mt_run(m, 0);
        for (int t = 1; t < threads; t++) pthread_join(th[t], NULL);
        r = m->result;
        if (r) break;
        uint64_t digest = XXH64_digest(m->xs);
        size_t used;
        r = zs_frame_end(m->f, m->e.produced, m->h.checksum ? digest : 0, src + m->pos, len - m->pos, &used);
        pos = m->pos + used;
        out += m->e.produced;
        // The whole output's hash, for mtcheck: one more pass only there.
        if (hash) XXH64_update(all, &digest, sizeof digest);
    }
    if (hash) *hash = XXH64_digest(all);
    XXH64_freeState(all);
    *out_len = out;
    return r;
}


static ZSTD_DStream *bench_ds;
static uint8_t *bench_obuf;

// ZSTD_decompressStream through a 128 KiB output buffer, as `zstd -d` and weir
// use it; the same frame digests as mt_decode's hash.
static int libzstd_stream(const uint8_t *src, size_t n, size_t *out_len, uint64_t *hash) {
    if (!bench_ds) {
        bench_ds = ZSTD_createDStream();
        bench_obuf = malloc(1 << 17);
    }
    ZSTD_DCtx_reset(bench_ds, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {src, n, 0};
    XXH64_state_t *frame = hash ? XXH64_createState() : NULL, *all = hash ? XXH64_createState() : NULL;
    if (hash) {
        XXH64_reset(frame, 0);
        XXH64_reset(all, 0);
    }
    size_t out = 0;
    while (in.pos < in.size) {
        ZSTD_outBuffer ob = {bench_obuf, 1 << 17, 0};
        size_t r = ZSTD_decompressStream(bench_ds, &ob, &in);
        if (ZSTD_isError(r)) return 1;
        out += ob.pos;
        if (hash) {
            XXH64_update(frame, bench_obuf, ob.pos);
            if (r == 0) {  // a frame ends
                uint64_t d = XXH64_digest(frame);
                XXH64_update(all, &d, sizeof d);
                XXH64_reset(frame, 0);
            }
        }
    }
    if (hash) {
        *hash = XXH64_digest(all);
        XXH64_freeState(frame);
        XXH64_freeState(all);
    }
    *out_len = out;
    return 0;
}

static mt_t bench_mt;

static int run_mode(const char *which, const uint8_t *src, size_t n, uint8_t **dst, size_t *cap) {
    size_t out;
    if (strcmp(which, "libzstd") == 0) return libzstd_stream(src, n, &out, NULL);
    if (!*dst) {
        unsigned long long size = ZSTD_getFrameContentSize(src, n);
        *cap = size < (1ull << 40) ? (size_t)size : (size_t)1 << 31;
        if (strcmp(which, "libzstd1") == 0 || strcmp(which, "zsplit-buf") == 0) *dst = malloc(*cap + ZS_WILDCOPY);
    }
    if (strcmp(which, "libzstd1") == 0) return ZSTD_isError(ZSTD_decompress(*dst, *cap, src, n));
    if (strcmp(which, "zsplit-buf") == 0) return zs_decompress(src, n, *dst, *cap, &out) != 0;
    int threads = strcmp(which, "zsplit1") == 0 ? 1 : strcmp(which, "zsplit2") == 0 ? 2 : 0;
    if (!threads) {
        fprintf(stderr, "unknown mode %s\n", which);
        exit(2);
    }
    if (!bench_mt.f && mt_init(&bench_mt, 2)) exit(2);
    return mt_decode(&bench_mt, src, n, threads, &out, NULL) != 0;
}

static int bench(const char *path, const char *which, int runs) {
    size_t n, cap = 0;
    uint8_t *src = read_file(path, &n), *dst = NULL;
    for (int i = 0; i < runs; i++)
        if (run_mode(which, src, n, &dst, &cap)) {
            fprintf(stderr, "%s: decoding failed\n", which);
            return 1;
        }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// libzstd, zsplit1, zsplit2 in turn (the order rotating), `runs` rounds:
// the medians of each one's wall-clock and CPU time (the process's, both
// threads of zsplit2), and the ratios of the wall-clock medians.
static int benchcmp(const char *path, int runs) {
    static const char *modes[3] = {"libzstd", "zsplit1", "zsplit2"};
    size_t n, cap = 0;
    uint8_t *src = read_file(path, &n), *dst = NULL;
    double *t[3], *cpu[3];
    uint64_t split[4], by[4] = {0};  // zsplit2's blocks: phase 1 on each thread, phase 2 on each
    for (int k = 0; k < 3; k++) {
        t[k] = malloc(sizeof(double) * (size_t)runs);
        cpu[k] = malloc(sizeof(double) * (size_t)runs);
    }
    for (int i = 0; i < runs; i++) {
        for (int j = 0; j < 3; j++) {
            int k = (i + j) % 3;
            if (k == 2) {
                memcpy(split, bench_mt.decoded_by, 2 * sizeof split[0]);
                memcpy(split + 2, bench_mt.executed_by, 2 * sizeof split[0]);
            }
            double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            if (run_mode(modes[k], src, n, &dst, &cap)) {
                fprintf(stderr, "%s: decoding failed\n", modes[k]);
                return 1;
            }
            t[k][i] = clock_s(CLOCK_MONOTONIC) - t0;
            cpu[k][i] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (getenv("ZSPLIT_BENCH_ROUNDS"))  // every round, to pick those no other process disturbed
                printf("round %d %s wall %.3f ms CPU %.3f ms\n", i, modes[k], t[k][i] * 1e3, cpu[k][i] * 1e3);
            if (k == 2)
                for (int x = 0; x < 2; x++) {
                    by[x] += bench_mt.decoded_by[x] - split[x];
                    by[2 + x] += bench_mt.executed_by[x] - split[2 + x];
                }
        }
    }
    double med[3];
    for (int k = 0; k < 3; k++) {
        qsort(t[k], (size_t)runs, sizeof(double), cmp_double);
        qsort(cpu[k], (size_t)runs, sizeof(double), cmp_double);
        med[k] = t[k][runs / 2];
        printf("%-8s wall median %8.2f ms (min %8.2f, max %8.2f)  CPU median %8.2f ms  (%d runs)\n", modes[k],
               med[k] * 1e3, t[k][0] * 1e3, t[k][runs - 1] * 1e3, cpu[k][runs / 2] * 1e3, runs);
    }
    printf("speed vs libzstd (wall medians): zsplit1 %.3fx  zsplit2 %.3fx;  zsplit2 vs zsplit1 %.3fx\n",
           med[0] / med[1], med[0] / med[2], med[1] / med[2]);
    printf("CPU a block (both modes): phase 1 %.1f us on the main thread, %.1f on the other; phase 2 + XXH64 "
           "%.1f us on a block the same thread decoded (%llu), %.1f on one the other did (%llu)\n",
           bench_mt.p1_cpu[0] * 1e6 / (double)(bench_mt.decoded_by[0] ? bench_mt.decoded_by[0] : 1),
           bench_mt.p1_cpu[1] * 1e6 / (double)(bench_mt.decoded_by[1] ? bench_mt.decoded_by[1] : 1),
           bench_mt.p2_cpu[0] * 1e6 / (double)(bench_mt.p2_n[0] ? bench_mt.p2_n[0] : 1),
           (unsigned long long)bench_mt.p2_n[0],
           bench_mt.p2_cpu[1] * 1e6 / (double)(bench_mt.p2_n[1] ? bench_mt.p2_n[1] : 1),
           (unsigned long long)bench_mt.p2_n[1]);
    printf("zsplit2's blocks: phase 1 %llu on the main thread, %llu on the other; phase 2 %llu and %llu; "
           "%llu waits (both modes)\n",
           (unsigned long long)by[0], (unsigned long long)by[1], (unsigned long long)by[2],
           (unsigned long long)by[3], (unsigned long long)bench_mt.waits);
    return 0;
}

// The control of benchcmp's zsplit2: two independent one-thread decodes at
// once, one a thread (each its own decoder), against one alone. If two at
// once cost more CPU each than one alone, the machine, not the split, makes
// zsplit2's threads dearer than zsplit1's. Also libzstd's the same way.
typedef struct {
    const char *mode;
    const uint8_t *src;
    size_t n;
    mt_t *m;
    ZSTD_DStream *ds;
    double cpu;
} pair_arg;

static void *pair_thread(void *p) {
    pair_arg *a = p;
    double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    size_t out;
    if (a->m) {
        mt_decode(a->m, a->src, a->n, 1, &out, NULL);
    } else {
        ZSTD_DCtx_reset(a->ds, ZSTD_reset_session_only);
        ZSTD_inBuffer in = {a->src, a->n, 0};
        uint8_t *o = malloc(1 << 17);
        while (in.pos < in.size) {
            ZSTD_outBuffer ob = {o, 1 << 17, 0};
            if (ZSTD_isError(ZSTD_decompressStream(a->ds, &ob, &in))) break;
        }
        free(o);
    }
    a->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

static int benchpair(const char *path, int runs) {
    size_t n;
    uint8_t *src = read_file(path, &n);
    static mt_t ms[2];
    pair_arg a[2];
    for (int k = 0; k < 2; k++)
        if (mt_init(&ms[k], 1)) return 1;
    ZSTD_DStream *ds[2] = {ZSTD_createDStream(), ZSTD_createDStream()};
    for (int lib = 0; lib < 2; lib++) {
        double *one = malloc(sizeof(double) * (size_t)runs), *two = malloc(sizeof(double) * (size_t)runs),
               *w1 = malloc(sizeof(double) * (size_t)runs), *w2 = malloc(sizeof(double) * (size_t)runs);
        for (int i = 0; i < runs; i++) {
            for (int k = 0; k < 2; k++) a[k] = (pair_arg){lib ? "libzstd" : "zsplit1", src, n, lib ? NULL : &ms[k], ds[k], 0};
            double t0 = clock_s(CLOCK_MONOTONIC);
            pair_thread(&a[0]);
            w1[i] = clock_s(CLOCK_MONOTONIC) - t0;
            one[i] = a[0].cpu;
            pthread_t th;
            t0 = clock_s(CLOCK_MONOTONIC);
            pthread_create(&th, NULL, pair_thread, &a[1]);
            pair_thread(&a[0]);
            pthread_join(th, NULL);
            w2[i] = clock_s(CLOCK_MONOTONIC) - t0;
            two[i] = (a[0].cpu + a[1].cpu) / 2;
        }
        qsort(one, (size_t)runs, sizeof(double), cmp_double);
        qsort(two, (size_t)runs, sizeof(double), cmp_double);
        qsort(w1, (size_t)runs, sizeof(double), cmp_double);
        qsort(w2, (size_t)runs, sizeof(double), cmp_double);
        printf("%s: one alone %.2f ms wall, %.2f ms CPU; two at once %.2f ms wall, %.2f ms CPU each "
               "(medians of %d)\n", lib ? "libzstd" : "zsplit1", w1[runs / 2] * 1e3, one[runs / 2] * 1e3,
               w2[runs / 2] * 1e3, two[runs / 2] * 1e3, runs);
    }
    return 0;
}

// The threaded decoder on 2 threads against zs_decompress (in order, one
// buffer), on every generated frame and damaged copy: the same success or
// failure, and on success the same bytes (by XXH64). One reading differs by
// design: the ring holds the window and two blocks, so an offset past that,
// which one buffer holding the whole frame takes, fails there, as in
// libzstd's streaming decoder (counted apart, when zs_decompress took a
// frame whose window is smaller than its output).
static int mt_vs_ours(const uint8_t *src, size_t len, size_t cap, const char *what) {
    static uint8_t *buf;
    static size_t buf_cap;
    if (cap > buf_cap) {
        free(buf);
        buf = malloc(cap + ZS_WILDCOPY);
        buf_cap = cap;
    }
    zs_frame_header h;
    static zs_frame *f;
    if (!f) f = zs_frame_create();
    // One zstd frame, a window the ring can hold: what mt_decode takes.
    if (len < 4 || zs_frame_begin(f, src, len, &h) || h.window_size > (64u << 20)) {
        n_mt_skipped++;
        return 0;
    }
    size_t our_len, mt_len;
    uint64_t mt_hash;
    int ours = zs_decompress(src, len, buf, cap, &our_len);
    if (ours == ZS_ERR_DST_SIZE || ours == ZS_ERR_UNSUPPORTED) {
        n_mt_skipped++;
        return 0;
    }
    if (!bench_mt.f && mt_init(&bench_mt, 2)) exit(2);
    int mt = mt_decode(&bench_mt, src, len, 2, &mt_len, &mt_hash);
    uint64_t our_hash = 0;
    if (ours == 0) {
        uint64_t d = XXH64(buf, our_len, 0);
        our_hash = XXH64(&d, sizeof d, 0);  // as mt_decode hashes a frame's digest
    }
    if ((mt == 0) == (ours == 0) && (mt != 0 || (mt_len == our_len && mt_hash == our_hash))) {
        n_mt_same++;
        return 0;
    }
    if (ours == 0 && mt == ZS_ERR_CORRUPT && h.window_size < our_len) {
        n_mt_ring++;
        return 0;
    }
    fprintf(stderr, "DIFF %s: threaded zsplit %s (%zu bytes), in order %s (%zu bytes)\n", what, zs_error_name(mt),
            mt_len, zs_error_name(ours), our_len);
    return 1;
}

// The threaded decoder against libzstd on a valid file: the same bytes (by
// each frame's XXH64) and the same length, on 1 and 2 threads.
static int mtcheck_buf(const uint8_t *src, size_t n, const char *what) {
    size_t ref_len, our_len;
    uint64_t ref_hash, our_hash;
    if (libzstd_stream(src, n, &ref_len, &ref_hash)) {
        fprintf(stderr, "%s: libzstd fails\n", what);
        return 1;
    }
    if (!bench_mt.f && mt_init(&bench_mt, 2)) exit(2);
    for (int threads = 1; threads <= 2; threads++) {
        int r = mt_decode(&bench_mt, src, n, threads, &our_len, &our_hash);
        if (r || our_len != ref_len || our_hash != ref_hash) {
            fprintf(stderr, "DIFF %s, threaded zsplit on %d: %s, %zu bytes (libzstd %zu)\n", what, threads,
                    zs_error_name(r), our_len, ref_len);
            return 1;
        }
    }
    return 0;
}

#ifdef ZSPLIT_FUZZ
// The libFuzzer target (scripts/harness/zstd-split-fuzz): every input, the oracle
// above; a difference aborts, and libFuzzer keeps the input.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dctx) dctx = ZSTD_createDCtx();
    if (compare(data, size, FUZZ_CAP, 0, "fuzz input")) abort();
    return 0;
}
#else
int main(int argc, char **argv) {
    dctx = ZSTD_createDCtx();
    if (argc >= 2 && strcmp(argv[1], "gen") == 0) return gen(argc > 2 ? strtoull(argv[2], 0, 10) : 1);
    if (argc == 4 && strcmp(argv[1], "file") == 0) return file_case(argv[2], argv[3]);
    if (argc >= 2 && strcmp(argv[1], "overrun") == 0) return overrun(argc > 2 ? strtoull(argv[2], 0, 10) : 1);
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "flips") == 0)
        return flips(argv[2], atoi(argv[3]), argc == 5 ? strtoull(argv[4], 0, 10) : 1);
    if (argc == 3 && strcmp(argv[1], "check") == 0) {
        size_t n;
        uint8_t *src = read_file(argv[2], &n);
        unsigned long long size = ZSTD_getFrameContentSize(src, n);
        size_t cap = size < (1ull << 34) ? (size_t)size + 1 : (size_t)1 << 31;
        // A file libzstd rejects is a damaged one: the same failure, no
        // further in zsplit (the fuzz oracle); else both must succeed.
        size_t ref_len;
        int valid, bad;
        // A frame may hold more than its content size: a larger cap until
        // neither decoder passes it.
        for (;;) {
            ensure(cap);
            valid = ref_decode(dctx, src, n, ref_buf, cap, &ref_len) != 1;
            bad = compare(src, n, cap, valid, argv[2]);
            if (bad || !last_skipped || cap >= ((size_t)1 << 31)) break;
            cap = cap * 4 > ((size_t)1 << 31) ? (size_t)1 << 31 : cap * 4;
        }
        printf("%s: %s; libzstd %s after %zu bytes in whole blocks, zsplit %s after %zu\n", argv[2],
               bad ? "DIFFERENT" : valid ? "same bytes" : "alike",
               last_ref == 0 ? "ok" : last_ref == 1 ? (ref_dst ? "dstSize_tooSmall" : "error") : "past the cap",
               last_ref_len, zs_error_name(last_ours), last_our_len);
        return bad;
    }
    if (argc == 3 && strcmp(argv[1], "fuzz-one") == 0) {
        size_t n;
        uint8_t *src = read_file(argv[2], &n);
        int bad = compare(src, n, FUZZ_CAP, 0, argv[2]);
        printf("%s: %s; libzstd %s after %zu bytes in whole blocks, zsplit %s after %zu\n", argv[2],
               bad ? "DIFFERENT" : "alike", last_ref == 0 ? "ok" : last_ref == 1 ? "error" : "past the cap",
               last_ref_len, zs_error_name(last_ours), last_our_len);
        return bad;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "bench") == 0)
        return bench(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 1);
    if (argc == 4 && strcmp(argv[1], "benchcmp") == 0) return benchcmp(argv[2], atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "benchpair") == 0) return benchpair(argv[2], atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "mtcheck") == 0) {
        size_t n;
        uint8_t *src = read_file(argv[2], &n);
        int bad = mtcheck_buf(src, n, argv[2]);
        printf("%s: threaded %s\n", argv[2], bad ? "DIFFERENT" : "same bytes");
        return bad;
    }
    fprintf(stderr, "usage: see the header of scripts/harness/zstd-split-diff.c\n");
    return 2;
}
#endif
