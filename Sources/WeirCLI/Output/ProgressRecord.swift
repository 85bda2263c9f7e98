import FoundationEssentials
import Weir

/// One line of `--progress=json`: the progress of one file as another
/// program reads it (zstd's users asked for it, facebook/zstd issue 4337;
/// `ffmpeg -progress` and `pv -n` are the precedent). Written on stderr at
/// each update while the work goes on (`"event": "progress"`), and once
/// when the file ends (`"event": "end"`).
///
/// Every key is always present, `null` where it is not known: `total_bytes`,
/// `percent` and `eta_seconds` without a known input size (a pipe without
/// `--size-hint`), `bytes_per_second` before any time passed, `level` when
/// not compressing, `status` before the end. `frames` counts frames written
/// when compressing, frames decoded when decompressing or testing. Names are
/// written as ``JSONRecord`` writes them (non-UTF-8 bytes kept, losslessly).
///
/// `percent` reads 100 only in the `end` of a file that succeeded: while
/// the work goes on, and in the `end` of a file that failed, it stays below
/// (at most 99.9), even when the input outgrew a `--size-hint` (it then
/// waits at 99.9, `eta_seconds` null); that `end` gives the true size as
/// `total_bytes`. Errors and warnings are ``MessageRecord`` lines.
package struct ProgressRecord: Encodable, Equatable, Sendable {
    /// `"progress"` while the file is worked on, `"end"` once it is done.
    package enum Event: String, Encodable, Sendable {
        case progress
        case end
    }

    /// How a file ended (`end` only), in ``JSONRecord``'s words: `"ok"`,
    /// `"error"` (an error record follows), or `"skipped"` (its output
    /// already is its finished compression).
    package enum Status: String, Encodable, Sendable {
        case ok
        case error
        case skipped
    }

    package var event: Event
    package var operation: OperationKind
    /// The input's name, `"-"` for standard input.
    package var input: String
    /// The file's place among the inputs, from 1, and how many there are.
    package var file: Int
    package var files: Int
    /// Input bytes the work has taken (compressing: compressed; decoding:
    /// compressed bytes decoded; otherwise read).
    package var bytesIn: Int
    /// Input bytes read (or mapped) so far: ahead of `bytes_in` by what
    /// waits for the work.
    package var bytesRead: Int
    /// Output bytes written.
    package var bytesOut: Int
    /// The input's size, when known (a regular file, or `--size-hint`).
    package var totalBytes: Int?
    /// 100 × bytes_in / total_bytes, 0 … 100; never goes back; 100 only in
    /// the `end` of a file that succeeded.
    package var percent: Double?
    /// Input bytes per second over the last seconds.
    package var bytesPerSecond: Double?
    /// Seconds to the end at that speed.
    package var etaSeconds: Double?
    /// Seconds since the file started.
    package var seconds: Double
    /// The level now (under `--adapt`, the last one chosen); null when not compressing.
    package var level: Int?
    /// Frames written so far (decoding: decoded).
    package var frames: Int?
    /// How the file ended; nil before the end.
    package var status: Status?

    /// The highest `percent` before a file ends well.
    package static let unfinishedPercent = 99.9

    /// The record of `meter`'s state now.
    ///
    /// - Parameters:
    ///   - input: the name as JSON gives it (`"-"` for standard input).
    ///   - level: the level now, compressing; nil otherwise.
    ///   - frames: frames written so far (decoding: decoded).
    ///   - status: how the file ended (an `end` record); nil before.
    package init(event: Event, meter: ProgressMeter, input: String, level: Int?, frames: Int?,
                 status: Status? = nil) {
        self.event = event
        operation = meter.mode
        self.input = input
        file = meter.file
        files = meter.files
        bytesIn = meter.bytesIn
        bytesRead = max(meter.received, meter.bytesIn)
        bytesOut = meter.bytesOut
        totalBytes = meter.total
        self.status = event == .end ? status ?? .ok : nil
        if let total = meter.total {
            if self.status == .ok {
                // Done: all of it, whatever the hint said.
                percent = 100
                totalBytes = max(total, meter.bytesIn)
            } else {
                let fraction = total > 0 ? Double(meter.bytesIn) / Double(total) : 0
                percent = min(Self.unfinishedPercent, fraction * 100)
            }
        }
        bytesPerSecond = meter.speed
        etaSeconds = meter.eta
        seconds = meter.seconds
        self.level = meter.mode == .compress ? level : nil
        self.frames = frames
    }

    enum CodingKeys: String, CodingKey {
        case event, operation, input, file, files, seconds, level, frames, percent, status
        case bytesIn = "bytes_in", bytesRead = "bytes_read", bytesOut = "bytes_out", totalBytes = "total_bytes"
        case bytesPerSecond = "bytes_per_second", etaSeconds = "eta_seconds"
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        try container.encode(operation, forKey: .operation)
        try container.encode(FileName.withoutPassword(input), forKey: .input)
        try container.encode(file, forKey: .file)
        try container.encode(files, forKey: .files)
        try container.encode(bytesIn, forKey: .bytesIn)
        try container.encode(bytesRead, forKey: .bytesRead)
        try container.encode(bytesOut, forKey: .bytesOut)
        try container.encode(totalBytes, forKey: .totalBytes)
        try container.encode(percent, forKey: .percent)
        try container.encode(bytesPerSecond, forKey: .bytesPerSecond)
        try container.encode(etaSeconds, forKey: .etaSeconds)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(level, forKey: .level)
        try container.encode(frames, forKey: .frames)
        try container.encode(status, forKey: .status)
    }

    /// Every key a record has, in the order written (`man weir` lists them).
    package static let keys = [
        "event", "operation", "input", "file", "files", "bytes_in", "bytes_read", "bytes_out", "total_bytes",
        "percent", "bytes_per_second", "eta_seconds", "seconds", "level", "frames", "status",
    ]

    /// The record as one line of JSON, without the newline.
    package func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Plain numbers and strings; every number is finite (the meter's
        // divisions are guarded).
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
