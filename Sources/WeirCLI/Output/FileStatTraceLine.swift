/// The lines of `--trace-file-stat`, in zstd 1.5.4's format (its
/// `UTIL_TRACE_CALL` and `UTIL_TRACE_RET`): a check entered,
/// `Trace:FileStat: > UTIL_isConsole(2)`, and its result,
/// `Trace:FileStat: < 0`, each indented by one space per check it is
/// nested in, so that a script reading zstd's trace reads weir's.
package enum FileStatTraceLine {
    /// The prefix of every line.
    package static let prefix = "Trace:FileStat: "

    /// The line of a check `call` (a name and its arguments) entered
    /// `depth` checks deep (0: at the top).
    package static func enter(_ call: String, depth: Int) -> String {
        prefix + String(repeating: " ", count: max(0, depth)) + "> " + call + "\n"
    }

    /// The line of the result of the check entered at `depth`.
    package static func result(_ value: Int, depth: Int) -> String {
        prefix + String(repeating: " ", count: max(0, depth)) + "< \(value)\n"
    }
}
