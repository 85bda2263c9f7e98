import Glibc

/// Writes text to file descriptor 2, whole, whatever its flags.
///
/// On a terminal, stdin, stdout and stderr often share one open file
/// description, and a DispatchIO channel on stdin or stdout sets O_NONBLOCK on
/// it while it is open: a plain write to stderr may then fail with EAGAIN.
/// So this retries short writes, EINTR, and EAGAIN after waiting with `poll`.
enum StandardError {
    /// Writes `text`; gives up silently on any other error (stderr gone).
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            // An empty text has no address and nothing to write.
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(STDERR_FILENO, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var descriptor = pollfd(fd: STDERR_FILENO, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 1000)
                } else {
                    return
                }
            }
        }
    }

    /// Whether stderr is a terminal.
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}
