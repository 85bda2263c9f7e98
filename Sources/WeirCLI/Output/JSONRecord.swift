import FoundationEssentials
import Weir

/// One line of `--json` output: the statistics of one input, or with
/// `"total": true` of all of them, encoded by Foundation's `JSONEncoder`.
///
/// Every key is always present, `null` where it does not apply (`output` for
/// `--test`, `level` and `chunk_bytes` when not compressing, `window_log`
/// when no frame was written or decoded), except `error`,
/// present only when `status` is `"error"`, `level_min` and `level_max`, present
/// only under `--adapt` (the levels the frames used), `warnings`, present only when the
/// input has some (an array of sentences, such as a seek table that does not
/// match its frames), and `total`, present only on the total object.
///
/// A name that is not valid UTF-8 is written as weir holds it (``FileName``):
/// each such byte is the character U+10FF00 + byte. That is valid JSON for
/// every parser and lossless; Python's `\udcXX` ("surrogateescape") would
/// be lone surrogates, which Foundation and serde_json refuse and jq
/// replaces with U+FFFD.
package struct JSONRecord: Codable, Equatable, Sendable {
    /// `"ok"`, `"error"`, or `"skipped"` (the output is already the
    /// input's finished compression).
    package enum Status: String, Codable, Sendable {
        case ok
        case error
        case skipped
    }

    package var operation: OperationKind
    /// The input path, `"-"` for standard input; null on the total object.
    package var input: String?
    /// The output path, `"-"` for standard output; null when there is none.
    package var output: String?
    package var bytesIn: Int
    package var bytesOut: Int
    /// bytes_out / bytes_in, 0 for an empty input.
    package var ratio: Double
    /// Wall-clock seconds.
    package var seconds: Double
    package var cpuSeconds: Double
    /// Input MiB (2^20 bytes) per wall-clock second.
    package var mibPerSecondIn: Double
    /// Output MiB (2^20 bytes) per wall-clock second.
    package var mibPerSecondOut: Double
    package var threads: Int
    package var level: Int?
    package var chunkBytes: Int?
    /// ``Statistics/windowLog``: the largest window the frames declare, 2^N.
    package var windowLog: Int?
    /// Under `--adapt`, ``Statistics/levels``: the lowest and highest
    /// levels the frames used; nil (and left out) otherwise.
    package var levelMin: Int?
    package var levelMax: Int?
    package var frames: Int
    /// The process's peak resident memory so far.
    package var peakRSSBytes: Int
    package var status: Status
    package var error: String?
    /// The run's ``Statistics/warnings``; nil when there are none.
    package var warnings: [String]?
    package var total: Bool?

    enum CodingKeys: String, CodingKey {
        case operation, input, output
        case bytesIn = "bytes_in"
        case bytesOut = "bytes_out"
        case ratio, seconds
        case cpuSeconds = "cpu_seconds"
        case mibPerSecondIn = "mib_per_s_in"
        case mibPerSecondOut = "mib_per_s_out"
        case threads, level
        case chunkBytes = "chunk_bytes"
        case windowLog = "window_log"
        case levelMin = "level_min"
        case levelMax = "level_max"
        case frames
        case peakRSSBytes = "peak_rss_bytes"
        case status, error, warnings, total
    }

    /// A record from statistics; every other initializer comes here.
    package init(operation: OperationKind, input: String?, output: String?, statistics: Statistics,
                level: Int?, chunkBytes: Int?, error: String? = nil, total: Bool? = nil) {
        self.operation = operation
        self.input = input
        self.output = output
        bytesIn = statistics.bytesIn
        bytesOut = statistics.bytesOut
        ratio = statistics.ratio
        seconds = statistics.seconds
        cpuSeconds = statistics.cpuSeconds
        let mebibyte = Double(1 << 20)
        mibPerSecondIn = statistics.seconds > 0 ? Double(statistics.bytesIn) / mebibyte / statistics.seconds : 0
        mibPerSecondOut = statistics.seconds > 0 ? Double(statistics.bytesOut) / mebibyte / statistics.seconds : 0
        threads = statistics.threads
        self.level = level
        self.chunkBytes = chunkBytes
        windowLog = statistics.windowLog
        levelMin = statistics.levels?.lowerBound
        levelMax = statistics.levels?.upperBound
        frames = statistics.frames
        peakRSSBytes = statistics.peakResidentBytes
        status = error == nil ? .ok : .error
        self.error = error
        warnings = statistics.warnings.isEmpty ? nil : statistics.warnings
        self.total = total
    }

    /// The record of a job that succeeded (`error` nil) or failed.
    ///
    /// A failed job has no statistics: pass what is known (zeros, the CPU
    /// time and memory so far).
    package init(job: FileJob, statistics: Statistics, error: String? = nil) {
        let options: CompressionOptions?
        if case .compress(let compression) = job.operation { options = compression } else { options = nil }
        var statistics = statistics
        if error != nil { statistics.threads = options?.resolvedThreads ?? 1 }
        self.init(operation: OperationKind(job.operation), input: job.input,
                  output: Self.outputName(job.destination), statistics: statistics,
                  level: options?.level, chunkBytes: statistics.chunkBytes ?? options?.chunkSize, error: error)
    }

    /// The total object after several inputs; its `error` says how many failed.
    package init(totals: RunTotals) {
        let error = totals.failed > 0 ? "\(totals.failed) of \(totals.inputs) inputs failed" : nil
        var statistics = totals.statistics
        statistics.threads = max(1, statistics.threads)
        self.init(operation: totals.operation, input: nil, output: nil, statistics: statistics,
                  level: totals.level, chunkBytes: totals.chunkBytes, error: error, total: true)
    }

    /// How a record names a destination: a path, `"-"`, or nil.
    package static func outputName(_ destination: FileJob.Destination) -> String? {
        switch destination {
        case .file(let path): return path
        case .shared(let file): return file.path
        case .standardOutput: return "-"
        case .none: return nil
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(operation, forKey: .operation)
        try container.encode(input.map(FileName.withoutPassword), forKey: .input)
        try container.encode(output.map(FileName.withoutPassword), forKey: .output)
        try container.encode(bytesIn, forKey: .bytesIn)
        try container.encode(bytesOut, forKey: .bytesOut)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(cpuSeconds, forKey: .cpuSeconds)
        try container.encode(mibPerSecondIn, forKey: .mibPerSecondIn)
        try container.encode(mibPerSecondOut, forKey: .mibPerSecondOut)
        try container.encode(threads, forKey: .threads)
        try container.encode(level, forKey: .level)
        try container.encode(chunkBytes, forKey: .chunkBytes)
        try container.encode(windowLog, forKey: .windowLog)
        try container.encodeIfPresent(levelMin, forKey: .levelMin)
        try container.encodeIfPresent(levelMax, forKey: .levelMax)
        try container.encode(frames, forKey: .frames)
        try container.encode(peakRSSBytes, forKey: .peakRSSBytes)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(warnings, forKey: .warnings)
        try container.encodeIfPresent(total, forKey: .total)
    }

    /// The record as one line of JSON, without the newline.
    package func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain numbers and strings cannot fail; non-finite numbers
        // cannot occur (every division above is guarded).
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
