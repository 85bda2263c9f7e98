import Glibc

/// The temporary files of every ``OutputFile`` not yet committed or
/// discarded, process-wide, so that a signal handler can remove them before
/// the process ends (``removeAll()``). What a SIGKILL, a crash or a power
/// cut leaves, the next run sweeps (``StaleTemporaries``).
package enum PendingTemporaries {
    private static let paths = Locked<Set<String>>([])

    /// Records `path`, a temporary just created.
    package static func insert(_ path: String) {
        paths.withLock { _ = $0.insert(path) }
    }

    /// Forgets `path`: named or removed.
    package static func remove(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    /// Removes every pending temporary file; for a signal handler about to
    /// end the process.
    package static func removeAll() {
        for path in paths.current { FileName.withCString(path, unlink) }
    }
}
