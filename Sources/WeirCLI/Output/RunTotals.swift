import Weir

/// The sum of every input's statistics, for the total line and the total
/// JSON object after several inputs.
package struct RunTotals: Sendable, Equatable {
    /// What the inputs had done to them.
    package let operation: OperationKind
    /// Inputs processed successfully.
    package private(set) var succeeded = 0
    /// Inputs that failed.
    package private(set) var failed = 0
    /// Byte counts, frames, wall and CPU seconds summed; threads, window and
    /// peak memory the largest seen.
    package private(set) var statistics = Statistics()
    /// The compression level, if compressing.
    package private(set) var level: Int?
    /// The largest chunk size an input was compressed with, if compressing.
    package private(set) var chunkBytes: Int?

    /// Starts with nothing counted.
    package init(operation: OperationKind) {
        self.operation = operation
        statistics.threads = 0
    }

    /// All inputs, successful or not.
    package var inputs: Int { succeeded + failed }

    /// Counts one successful input.
    package mutating func add(_ job: FileJob, _ result: Statistics) {
        succeeded += 1
        statistics.bytesIn += result.bytesIn
        statistics.bytesOut += result.bytesOut
        statistics.frames += result.frames
        statistics.seconds += result.seconds
        statistics.cpuSeconds += result.cpuSeconds
        statistics.threads = max(statistics.threads, result.threads)
        statistics.peakResidentBytes = max(statistics.peakResidentBytes, result.peakResidentBytes)
        if let log = result.windowLog { statistics.windowLog = max(statistics.windowLog ?? 0, log) }
        if case .compress(let options) = job.operation {
            level = level ?? options.level
            chunkBytes = max(chunkBytes ?? 0, result.chunkBytes ?? options.chunkSize)
        }
    }

    /// Counts one failed input.
    package mutating func addFailure() {
        failed += 1
    }
}
