/// The current speed of a byte counter: bytes per second over the last
/// `span` seconds, not the average since the start, so a stall or a burst
/// shows within a few seconds.
///
/// Fed with (time, running total) samples by a renderer ten times a second,
/// it keeps the samples of the last `span` seconds plus one older sample as
/// the window's base, so at most about `span × 10 + 2` of them.
package struct SpeedWindow: Sendable, Equatable {
    /// The length of the window, in seconds.
    package let span: Double
    private var samples: [Sample]

    private struct Sample: Sendable, Equatable {
        var time: Double
        var bytes: Int
    }

    /// - Parameters:
    ///   - span: the window's length in seconds (default 3).
    ///   - start: the time of the first sample, whose count is 0.
    package init(span: Double = 3, start: Double = 0) {
        self.span = span
        samples = [Sample(time: start, bytes: 0)]
    }

    /// Adds a sample: at `time` (seconds, never going back), the counter was
    /// `bytes` in all.
    package mutating func record(time: Double, bytes: Int) {
        if let last = samples.last, time <= last.time {
            samples[samples.count - 1].bytes = max(last.bytes, bytes)
            return
        }
        samples.append(Sample(time: time, bytes: bytes))
        // Drop what is older than the window, keeping one sample at or before
        // its start as the base.
        let windowStart = time - span
        var drop = 0
        while samples.count - drop > 2 && samples[drop + 1].time <= windowStart { drop += 1 }
        if drop > 0 { samples.removeFirst(drop) }
    }

    /// Bytes per second between the window's base and the newest sample;
    /// nil before two samples.
    package var bytesPerSecond: Double? {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return nil }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }
}
