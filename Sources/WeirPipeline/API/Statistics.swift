import WeirFiles
import WeirSystem

/// What one run of a pipeline did.
public struct Statistics: Sendable, Equatable {
    /// Bytes read from the input.
    public var bytesIn: Int = 0
    /// Bytes written to the output.
    public var bytesOut: Int = 0
    /// Frames written (compression) or decoded (decompression).
    public var frames: Int = 0
    /// Wall-clock seconds from start to the last byte written.
    public var seconds: Double = 0
    /// Worker threads used.
    public var threads: Int = 1
    /// When compressing, the input bytes per frame the run used: the chunk
    /// size asked for, or less for a file cut into one frame per worker
    /// (`CompressionOptions/fitted(toInputSize:)`); nil when decompressing.
    public var chunkBytes: Int?
    /// The largest window the run's frames declare, as a power of two
    /// (`FrameHeader/windowLog`): what decoding them takes, read from the
    /// frames written or decoded; nil when there was no zstd frame.
    public var windowLog: Int?
    /// Under `--adapt`, the lowest and highest levels the frames were
    /// compressed at; nil otherwise.
    public var levels: ClosedRange<Int>?
    /// CPU seconds (user + system, all threads) the process spent during the
    /// run; set by `FileJob`, 0 from a bare pipeline.
    public var cpuSeconds: Double = 0
    /// The process's peak resident memory at the end of the run, in bytes;
    /// set by `FileJob`, 0 from a bare pipeline.
    public var peakResidentBytes: Int = 0
    /// The part of ``bytesIn`` and ``bytesOut`` an interrupted run had
    /// done, whose frames this run kept (`NAME.part`, ``CompressionOptions/resumable``).
    public var resumedBytesIn: Int = 0
    public var resumedBytesOut: Int = 0
    /// Things the user should know about a run that succeeded, each a
    /// sentence that does not repeat the input's name (the caller knows it):
    /// for example, a seek table that does not match its frames. The library
    /// never prints them; the command line shows them as `weir: FILE:
    /// warning: …` (in the JSON object with `--json`).
    public var warnings: [String] = []

    /// Creates empty statistics.
    public init() {}

    /// Counts the frames and bytes `partial` kept from an interrupted run,
    /// and says so when it dropped an earlier one.
    package mutating func keep(_ partial: PartialOutput, path: String) {
        switch partial.start {
        case .fresh: break
        case .resumed(let frames, let input, let output):
            self.frames += frames
            bytesIn += input
            bytesOut += output
            resumedBytesIn = input
            resumedBytesOut = output
        case .startedOver(let reason):
            warnings.append("\(FileName.displayed(partial.partPath)) was not resumed: \(reason); started over")
        }
    }

    /// bytesOut / bytesIn, or 0 for an empty input.
    public var ratio: Double {
        bytesIn == 0 ? 0 : Double(bytesOut) / Double(bytesIn)
    }

    /// These statistics with `cpuSeconds` and `peakResidentBytes` taken from
    /// the process's usage now, against `start` read before the run.
    package func measuringUsage(since start: ResourceUsage, now: ResourceUsage = .current()) -> Statistics {
        var statistics = self
        statistics.cpuSeconds = max(0, now.cpuSeconds - start.cpuSeconds)
        statistics.peakResidentBytes = now.peakResidentBytes
        return statistics
    }
}
