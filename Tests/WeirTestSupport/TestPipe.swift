import Glibc

/// A pipe for a test, both ends close-on-exec: a child process another test
/// spawns must not keep a write end open, or this test's reader would wait
/// for that child to exit. (`fcntl` just after `pipe()` leaves a window the
/// engine could not afford, but a test at worst waits a little longer.)
struct TestPipe {
    /// The end to read from.
    let read: Int32
    /// The end to write to.
    let write: Int32

    /// A new pipe, or nil with `errno` set when the system refused.
    static func make() -> TestPipe? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return TestPipe(read: ends[0], write: ends[1])
    }

    /// Closes both ends.
    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}
