#ifndef WEIR_ZSTD_TRACE_LOG_H
#define WEIR_ZSTD_TRACE_LOG_H

/// zstd's `--trace FILE`: libzstd (built with ZSTD_TRACE, as Debian's is)
/// calls the weak hooks ZSTD_trace_{compress,decompress}_{begin,end} around
/// every frame it compresses or decompresses; zstd_trace_log.c defines them,
/// and while a log is open each frame appends one line of zstd's CSV
/// (Algorithm, Version, Method, Mode, Level, Workers, Dictionary Size,
/// Uncompressed Size, Compressed Size, Duration Nanos, Compression Ratio,
/// Speed MB/s). The executable exports the hooks so that the shared libzstd
/// finds them.

/// Opens `path` for appending (created 0666 less the umask), writing zstd's
/// header line first when it was not a regular file; the lines of every
/// frame from then on go there. 0, or -1 with errno set.
int weir_trace_open(const char *path);

/// Stops the log and closes its file.
void weir_trace_close(void);

/// Whether libzstd calls the hooks in this process: 1 when the loaded
/// libzstd resolved them to weir's (they are in the dynamic symbol table).
int weir_trace_hooks_linked(void);

#endif
