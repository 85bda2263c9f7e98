import Weir
import WeirCLI

/// `--trace-file-stat`: zstd's test hook, which prints each check of a
/// file's status on stderr as it is made (``FileStatTraceLine``), named as
/// zstd names the same check (`UTIL_isConsole(2)` is `isatty(2)`,
/// `UTIL_isLink(NAME)` the check that skips symbolic links).
///
/// What is traced is what the command decides with: terminals, links, an
/// output that exists. The engine's own calls (an input's size, an output's
/// mode and times, made on its queues) are not traced, so weir's trace is
/// shorter than zstd's (docs/zstd.md).
///
/// The state (on or off, and how deep in nested checks) is behind a lock:
/// the command sets it once, on the main thread, before any check.
enum FileStatTrace {
    private struct State: Sendable {
        var enabled = false
        var depth = 0
    }
    private static let state = Locked(State())

    /// Turns the trace on (before the first check).
    static func enable() {
        state.withLock { $0.enabled = true }
    }

    /// Runs the check `body`, named `call`, and returns its answer; when the
    /// trace is on, the check and its answer (as zstd's C value: 1 for yes,
    /// 0 for no) are printed around it.
    static func check(_ call: @autoclosure () -> String, _ body: () -> Bool) -> Bool {
        let depth = state.withLock { state -> Int? in
            guard state.enabled else { return nil }
            state.depth += 1
            return state.depth - 1
        }
        guard let depth else { return body() }
        StandardError.write(FileStatTraceLine.enter(call(), depth: depth))
        let answer = body()
        StandardError.write(FileStatTraceLine.result(answer ? 1 : 0, depth: depth))
        state.withLock { $0.depth -= 1 }
        return answer
    }
}
