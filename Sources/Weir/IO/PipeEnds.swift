import CSupport
import Glibc

/// The two ends of a new pipe, both close-on-exec from the moment they exist.
///
/// `pipe()` followed by `fcntl(FD_CLOEXEC)` leaves a window in which a
/// process spawned by another thread inherits the ends; a child holding a
/// copy of a write end keeps the pipe open, and its reader never sees the
/// end of the input. `pipe2(O_CLOEXEC)` has no such window.
struct PipeEnds {
    /// The end to read from.
    let read: Int32
    /// The end to write to.
    let write: Int32

    /// Creates a pipe, or returns nil with `errno` set when the system
    /// refused (too many open descriptors, for example).
    static func make() -> PipeEnds? {
        var ends: [Int32] = [-1, -1]
        guard weir_pipe_cloexec(&ends) == 0 else { return nil }
        return PipeEnds(read: ends[0], write: ends[1])
    }

    /// Closes both ends.
    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}
