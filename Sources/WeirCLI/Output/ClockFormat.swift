/// Durations as a clock reads them: `0:07`, `12:34`, `1:02:03`.
package enum ClockFormat {
    /// `seconds` (rounded down) as `m:ss`, or `h:mm:ss` from an hour; `--:--`
    /// when negative, not finite, or 100 hours or more.
    package static func string(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 100 * 3600 else { return "--:--" }
        let total = Int(seconds)
        let hours = total / 3600
        let minutes = total / 60 % 60
        let secs = total % 60
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if hours > 0 { return "\(hours):\(two(minutes)):\(two(secs))" }
        return "\(minutes):\(two(secs))"
    }
}
