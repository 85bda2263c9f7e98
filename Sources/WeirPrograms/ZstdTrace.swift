import Weir
import CSupport
import Glibc

/// zstd's `--trace FILE`: one CSV line per frame that libzstd compresses or
/// decompresses in this process, in zstd's columns, written by libzstd's own
/// trace hooks (CSupport/zstd_trace_log.c). Each of weir's parallel frames
/// is a line of its own; so is each frame of `-b`'s runs.
package enum ZstdTrace {
    /// Starts the log: lines are appended to `path`, after zstd's header line
    /// when it is not a regular file yet.
    ///
    /// - Throws: ``WeirError`` `.system` when the file cannot be opened, or
    ///   `.library` when libzstd would not call weir's hooks (a libzstd built
    ///   without ZSTD_TRACE, or an executable that does not export them).
    package static func start(path: String) throws(WeirError) {
        guard weir_trace_hooks_linked() != 0 else {
            throw WeirError.library(path: path, operation: .open,
                                    "libzstd's trace hooks are not linked into this program: no trace can be written")
        }
        guard weir_trace_open(path) == 0 else { throw WeirError.system(errno, path: path, operation: .open) }
    }

    /// Ends the log and closes its file.
    package static func stop() { weir_trace_close() }
}
