#define _GNU_SOURCE  // dlvsym
#include "library_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>

// One library: its file, the package that has it, and what loading it gave.
struct library {
    const char *soname;
    const char *package;
    pthread_once_t once;
    void *handle;
    char why[512];
};

static struct library libraries[WEIR_LIBRARY_COUNT] = {
    [WEIR_LIBRARY_FUSE] = {"libfuse3.so.3", "libfuse3-3", PTHREAD_ONCE_INIT, NULL, ""},
    [WEIR_LIBRARY_ISAL] = {"libisal.so.2", "libisal2", PTHREAD_ONCE_INIT, NULL, ""},
    [WEIR_LIBRARY_DEFLATE] = {"libdeflate.so.0", "libdeflate0", PTHREAD_ONCE_INIT, NULL, ""},
    [WEIR_LIBRARY_Z] = {"libz.so.1", "zlib1g", PTHREAD_ONCE_INIT, NULL, ""},
    [WEIR_LIBRARY_LZ4] = {"liblz4.so.1", "liblz4-1", PTHREAD_ONCE_INIT, NULL, ""},
    [WEIR_LIBRARY_LZMA] = {"liblzma.so.5", "liblzma5", PTHREAD_ONCE_INIT, NULL, ""},
};

// pthread_once takes no argument: one loader a library.
#define LOADER(index)                                                                            \
    static void load_##index(void) {                                                             \
        struct library *library = &libraries[index];                                             \
        library->handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);                        \
        if (library->handle == NULL) {                                                           \
            snprintf(library->why, sizeof library->why, "cannot load %s (Debian's %s): %s",       \
                     library->soname, library->package, dlerror());                              \
        }                                                                                        \
    }
LOADER(WEIR_LIBRARY_FUSE)
LOADER(WEIR_LIBRARY_ISAL)
LOADER(WEIR_LIBRARY_DEFLATE)
LOADER(WEIR_LIBRARY_Z)
LOADER(WEIR_LIBRARY_LZ4)
LOADER(WEIR_LIBRARY_LZMA)
#undef LOADER

static void (*const loaders[WEIR_LIBRARY_COUNT])(void) = {
    load_WEIR_LIBRARY_FUSE, load_WEIR_LIBRARY_ISAL, load_WEIR_LIBRARY_DEFLATE,
    load_WEIR_LIBRARY_Z,    load_WEIR_LIBRARY_LZ4,  load_WEIR_LIBRARY_LZMA,
};

const char *weir_library_load(enum weir_library index) {
    if ((unsigned)index >= WEIR_LIBRARY_COUNT) return "no such library";
    struct library *library = &libraries[index];
    pthread_once(&library->once, loaders[index]);
    return library->handle == NULL ? library->why : NULL;
}

// The symbol `name` (of `version`, or the default one when NULL: the one a
// link against the library binds) of `index`; a library or symbol that is
// not there ends the process with one line: nothing can go on without it.
static void *symbol(enum weir_library index, const char *name, const char *version) {
    const char *why = weir_library_load(index);
    void *found = NULL;
    if (why == NULL) {
        void *handle = libraries[index].handle;
        found = version != NULL ? dlvsym(handle, name, version) : dlsym(handle, name);
        if (found == NULL) why = dlerror();
    }
    if (found == NULL) {
        char line[768];
        int length = snprintf(line, sizeof line, "weir: %s: %s\n", name, why != NULL ? why : "not found");
        if (length > 0) (void)!write(STDERR_FILENO, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
        _exit(127);
    }
    return found;
}

// `name`, with its header's prototype: the first call resolves the
// library's symbol; every call goes through it. The pointer is written
// once with the same value whichever thread resolves it first.
#define RESOLVED(library, version, name)                                                         \
    static __typeof__(&name) resolved;                                                           \
    __typeof__(&name) function = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);                   \
    if (function == NULL) {                                                                      \
        function = (__typeof__(&name))symbol(library, #name, version);                           \
        __atomic_store_n(&resolved, function, __ATOMIC_RELEASE);                                 \
    }
#define FORWARD(library, version, type, name, parameters, arguments)                            \
    type name parameters {                                                                       \
        RESOLVED(library, version, name)                                                         \
        return function arguments;                                                               \
    }
// The same, of a function that returns nothing.
#define FORWARD_VOID(library, version, name, parameters, arguments)                             \
    void name parameters {                                                                       \
        RESOLVED(library, version, name)                                                         \
        function arguments;                                                                      \
    }

#define FUSE WEIR_LIBRARY_FUSE
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_err, (fuse_req_t req, int err), (req, err))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_reply_none, (fuse_req_t req), (req))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_entry, (fuse_req_t req, const struct fuse_entry_param *e), (req, e))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_attr, (fuse_req_t req, const struct stat *attr, double attr_timeout),
        (req, attr, attr_timeout))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_readlink, (fuse_req_t req, const char *link), (req, link))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_open, (fuse_req_t req, const struct fuse_file_info *fi), (req, fi))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_buf, (fuse_req_t req, const char *buf, size_t size), (req, buf, size))
FORWARD(FUSE, "FUSE_3.0", int, fuse_reply_statfs, (fuse_req_t req, const struct statvfs *stbuf), (req, stbuf))
FORWARD(FUSE, "FUSE_3.0", size_t, fuse_add_direntry,
        (fuse_req_t req, char *buf, size_t bufsize, const char *name, const struct stat *stbuf, off_t off),
        (req, buf, bufsize, name, stbuf, off))
FORWARD(FUSE, "FUSE_3.0", size_t, fuse_add_direntry_plus,
        (fuse_req_t req, char *buf, size_t bufsize, const char *name, const struct fuse_entry_param *e, off_t off),
        (req, buf, bufsize, name, e, off))
FORWARD(FUSE, "FUSE_3.0", void *, fuse_req_userdata, (fuse_req_t req), (req))
FORWARD(FUSE, "FUSE_3.0", struct fuse_session *, fuse_session_new,
        (struct fuse_args *args, const struct fuse_lowlevel_ops *op, size_t op_size, void *userdata),
        (args, op, op_size, userdata))
FORWARD(FUSE, "FUSE_3.0", int, fuse_session_mount, (struct fuse_session *se, const char *mountpoint),
        (se, mountpoint))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_session_exit, (struct fuse_session *se), (se))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_session_unmount, (struct fuse_session *se), (se))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_session_destroy, (struct fuse_session *se), (se))
FORWARD(FUSE, "FUSE_3.0", int, fuse_set_signal_handlers, (struct fuse_session *se), (se))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_remove_signal_handlers, (struct fuse_session *se), (se))
FORWARD_VOID(FUSE, "FUSE_3.0", fuse_opt_free_args, (struct fuse_args *args), (args))
FORWARD(FUSE, "FUSE_3.12", struct fuse_loop_config *, fuse_loop_cfg_create, (void), ())
FORWARD_VOID(FUSE, "FUSE_3.12", fuse_loop_cfg_destroy, (struct fuse_loop_config *config), (config))
FORWARD_VOID(FUSE, "FUSE_3.12", fuse_loop_cfg_set_idle_threads, (struct fuse_loop_config *config, unsigned int value),
        (config, value))
FORWARD_VOID(FUSE, "FUSE_3.12", fuse_loop_cfg_set_max_threads, (struct fuse_loop_config *config, unsigned int value),
        (config, value))
FORWARD(FUSE, "FUSE_3.12", int, fuse_session_loop_mt, (struct fuse_session *se, struct fuse_loop_config *config),
        (se, config))
#undef FUSE

#define ISAL WEIR_LIBRARY_ISAL
FORWARD_VOID(ISAL, NULL, isal_inflate_init, (struct inflate_state *state), (state))
FORWARD(ISAL, NULL, int, isal_inflate, (struct inflate_state *state), (state))
#undef ISAL

#define DEFLATE WEIR_LIBRARY_DEFLATE
FORWARD(DEFLATE, NULL, struct libdeflate_compressor *, libdeflate_alloc_compressor, (int compression_level),
        (compression_level))
FORWARD(DEFLATE, NULL, size_t, libdeflate_deflate_compress,
        (struct libdeflate_compressor *compressor, const void *in, size_t in_nbytes, void *out, size_t out_nbytes_avail),
        (compressor, in, in_nbytes, out, out_nbytes_avail))
FORWARD(DEFLATE, NULL, size_t, libdeflate_deflate_compress_bound,
        (struct libdeflate_compressor *compressor, size_t in_nbytes), (compressor, in_nbytes))
FORWARD_VOID(DEFLATE, NULL, libdeflate_free_compressor, (struct libdeflate_compressor *compressor), (compressor))
FORWARD(DEFLATE, NULL, struct libdeflate_decompressor *, libdeflate_alloc_decompressor, (void), ())
FORWARD(DEFLATE, NULL, enum libdeflate_result, libdeflate_gzip_decompress_ex,
        (struct libdeflate_decompressor *decompressor, const void *in, size_t in_nbytes, void *out,
         size_t out_nbytes_avail, size_t *actual_in_nbytes_ret, size_t *actual_out_nbytes_ret),
        (decompressor, in, in_nbytes, out, out_nbytes_avail, actual_in_nbytes_ret, actual_out_nbytes_ret))
FORWARD_VOID(DEFLATE, NULL, libdeflate_free_decompressor, (struct libdeflate_decompressor *decompressor),
        (decompressor))
FORWARD(DEFLATE, NULL, uint32_t, libdeflate_crc32, (uint32_t crc, const void *buffer, size_t len), (crc, buffer, len))
#undef DEFLATE

#define Z WEIR_LIBRARY_Z
FORWARD(Z, NULL, int, inflate, (z_streamp strm, int flush), (strm, flush))
FORWARD(Z, NULL, int, inflateEnd, (z_streamp strm), (strm))
FORWARD(Z, NULL, int, inflateReset, (z_streamp strm), (strm))
FORWARD(Z, NULL, int, inflateInit2_, (z_streamp strm, int windowBits, const char *version, int stream_size),
        (strm, windowBits, version, stream_size))
#undef Z

#define LZ4 WEIR_LIBRARY_LZ4
FORWARD(LZ4, NULL, unsigned, LZ4F_isError, (LZ4F_errorCode_t code), (code))
FORWARD(LZ4, NULL, const char *, LZ4F_getErrorName, (LZ4F_errorCode_t code), (code))
FORWARD(LZ4, NULL, size_t, LZ4F_compressFrameBound, (size_t srcSize, const LZ4F_preferences_t *preferencesPtr),
        (srcSize, preferencesPtr))
FORWARD(LZ4, NULL, LZ4F_errorCode_t, LZ4F_createCompressionContext, (LZ4F_cctx * *cctxPtr, unsigned version),
        (cctxPtr, version))
FORWARD(LZ4, NULL, LZ4F_errorCode_t, LZ4F_freeCompressionContext, (LZ4F_cctx * cctx), (cctx))
FORWARD(LZ4, NULL, size_t, LZ4F_compressBegin,
        (LZ4F_cctx * cctx, void *dstBuffer, size_t dstCapacity, const LZ4F_preferences_t *prefsPtr),
        (cctx, dstBuffer, dstCapacity, prefsPtr))
FORWARD(LZ4, NULL, size_t, LZ4F_compressUpdate,
        (LZ4F_cctx * cctx, void *dstBuffer, size_t dstCapacity, const void *srcBuffer, size_t srcSize,
         const LZ4F_compressOptions_t *cOptPtr),
        (cctx, dstBuffer, dstCapacity, srcBuffer, srcSize, cOptPtr))
FORWARD(LZ4, NULL, size_t, LZ4F_compressEnd,
        (LZ4F_cctx * cctx, void *dstBuffer, size_t dstCapacity, const LZ4F_compressOptions_t *cOptPtr),
        (cctx, dstBuffer, dstCapacity, cOptPtr))
FORWARD(LZ4, NULL, LZ4F_errorCode_t, LZ4F_createDecompressionContext, (LZ4F_dctx * *dctxPtr, unsigned version),
        (dctxPtr, version))
FORWARD(LZ4, NULL, LZ4F_errorCode_t, LZ4F_freeDecompressionContext, (LZ4F_dctx * dctx), (dctx))
FORWARD(LZ4, NULL, size_t, LZ4F_decompress,
        (LZ4F_dctx * dctx, void *dstBuffer, size_t *dstSizePtr, const void *srcBuffer, size_t *srcSizePtr,
         const LZ4F_decompressOptions_t *dOptPtr),
        (dctx, dstBuffer, dstSizePtr, srcBuffer, srcSizePtr, dOptPtr))
FORWARD_VOID(LZ4, NULL, LZ4F_resetDecompressionContext, (LZ4F_dctx * dctx), (dctx))
#undef LZ4

#define LZMA WEIR_LIBRARY_LZMA
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_code, (lzma_stream * strm, lzma_action action), (strm, action))
FORWARD_VOID(LZMA, "XZ_5.0", lzma_end, (lzma_stream * strm), (strm))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_easy_encoder, (lzma_stream * strm, uint32_t preset, lzma_check check),
        (strm, preset, check))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_alone_encoder, (lzma_stream * strm, const lzma_options_lzma *options),
        (strm, options))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_alone_decoder, (lzma_stream * strm, uint64_t memlimit), (strm, memlimit))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_stream_decoder, (lzma_stream * strm, uint64_t memlimit, uint32_t flags),
        (strm, memlimit, flags))
FORWARD(LZMA, "XZ_5.0", lzma_bool, lzma_lzma_preset, (lzma_options_lzma * options, uint32_t preset),
        (options, preset))
FORWARD(LZMA, "XZ_5.0", size_t, lzma_stream_buffer_bound, (size_t uncompressed_size), (uncompressed_size))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_stream_buffer_decode,
        (uint64_t * memlimit, uint32_t flags, const lzma_allocator *allocator, const uint8_t *in, size_t *in_pos,
         size_t in_size, uint8_t *out, size_t *out_pos, size_t out_size),
        (memlimit, flags, allocator, in, in_pos, in_size, out, out_pos, out_size))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_stream_footer_decode, (lzma_stream_flags * options, const uint8_t *in),
        (options, in))
FORWARD(LZMA, "XZ_5.0", lzma_ret, lzma_index_buffer_decode,
        (lzma_index * *i, uint64_t *memlimit, const lzma_allocator *allocator, const uint8_t *in, size_t *in_pos,
         size_t in_size),
        (i, memlimit, allocator, in, in_pos, in_size))
FORWARD_VOID(LZMA, "XZ_5.0", lzma_index_end, (lzma_index * i, const lzma_allocator *allocator), (i, allocator))
FORWARD(LZMA, "XZ_5.0", lzma_vli, lzma_index_stream_size, (const lzma_index *i), (i))
FORWARD(LZMA, "XZ_5.0", lzma_vli, lzma_index_uncompressed_size, (const lzma_index *i), (i))
#undef LZMA
