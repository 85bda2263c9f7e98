// The libraries only some commands use — libfuse 3 (`weir mount`), ISA-L,
// libdeflate, zlib, liblz4 and liblzma (gzip, .xz, .lzma and .lz4) — are
// loaded when one of their functions is first called, not when weir
// starts: a start that maps them pays about 1 MiB of resident memory for
// their relocations and data (issue 82, item 4), and most commands never
// call them. Sources/CLibraries/library_loader.c defines each function weir
// calls under its own name, with the library's own prototype (its header
// included), and forwards to the library's symbol found by dlopen + dlvsym.
#ifndef WEIR_LIBRARY_LOADER_H
#define WEIR_LIBRARY_LOADER_H

#ifdef __cplusplus
extern "C" {
#endif

/// The libraries loaded on first use.
enum weir_library {
    WEIR_LIBRARY_FUSE = 0,
    WEIR_LIBRARY_ISAL,
    WEIR_LIBRARY_DEFLATE,
    WEIR_LIBRARY_Z,
    WEIR_LIBRARY_LZ4,
    WEIR_LIBRARY_LZMA,
    WEIR_LIBRARY_COUNT
};

/// Loads `library` if it is not yet: NULL when it is loaded, else why not,
/// in one line naming the library and Debian's package (the caller's error
/// message). A function of a library that cannot be loaded, called without
/// this check, ends the process with that line (status 127, as the shell's
/// "command not found").
const char *weir_library_load(enum weir_library library);

#ifdef __cplusplus
}
#endif
#endif
