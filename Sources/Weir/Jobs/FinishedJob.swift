import WeirFiles
import WeirPipeline

/// A job whose work is done: its statistics, and its output complete but not
/// yet under its name. ``CommitQueue`` commits it (alone, or with others so
/// that one sync serves them all), then removes the input when asked.
package struct FinishedJob: Sendable {
    /// What the job measured.
    package var statistics: Statistics
    /// The output to commit: nil when writing standard output or nothing (`-t`).
    package let output: OutputFile?
    /// The input, removed once the output is durable under its name (`--rm`).
    package let input: String
    /// Whether to remove the input: only for a regular output written to a
    /// temporary file, never after writing a device or FIFO in place.
    package let removesInput: Bool

    package init(statistics: Statistics, output: OutputFile?, input: String, removesInput: Bool) {
        self.statistics = statistics
        self.output = output
        self.input = input
        self.removesInput = removesInput && input != "-" && output.map { !$0.isInPlace } == true
    }

    /// The bytes the output holds that a sync writes: none for standard output.
    var unsyncedBytes: Int { output?.temporaryPath == nil ? 0 : statistics.bytesOut }
}
