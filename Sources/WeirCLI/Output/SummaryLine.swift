import Weir

/// The one-line summary after a file, as in
/// `linux.tar: 14.75% (1.27 GiB => 191.5 MiB, linux.tar.zst) in 1.46 s, 890 MiB/s, 2 threads`,
/// after a decompressed file, zstd's words first, as in
/// `linux.tar.zst       : 1361950720 bytes (191.5 MiB => 1.27 GiB, linux.tar) in 1.46 s, 890 MiB/s, 163 frames`,
/// and the total line after several files, as in
/// `3 files: 14.75% (1.27 GiB => 191.5 MiB) in 1.46 s, 890 MiB/s, 2 threads`.
/// Verbose adds `, cpu 2.80 s, peak memory 85.2 MiB`.
package struct SummaryLine: Sendable {
    /// The line, without a newline.
    package let text: String

    /// The summary of one file.
    package init(job: FileJob, statistics: Statistics, verbose: Bool = false) {
        text = Self.line(operation: OperationKind(job.operation), subject: FileName.displayed(job.inputName),
                         output: FileName.displayed(job.outputName), statistics: statistics, allPassed: true,
                         verbose: verbose)
    }

    /// The total of several files.
    package init(totals: RunTotals, verbose: Bool = false) {
        var subject = "\(totals.inputs) files"
        if totals.failed > 0 { subject += ", \(totals.failed) failed" }
        text = Self.line(operation: totals.operation, subject: subject, output: nil,
                         statistics: totals.statistics, allPassed: totals.failed == 0, verbose: verbose)
    }

    private static func line(operation: OperationKind, subject: String, output: String?,
                             statistics: Statistics, allPassed: Bool, verbose: Bool) -> String {
        let seconds = CFormat.string("%.2f s", statistics.seconds)
        // The speed of the uncompressed side, whichever way: what users
        // compare between tools (zstd -d's MB/s is of what it writes).
        // A resumed run's speed is of what it did itself.
        let uncompressed = operation == .compress ? statistics.bytesIn - statistics.resumedBytesIn
                                                  : statistics.bytesOut - statistics.resumedBytesOut
        let speed = statistics.seconds > 0
            ? ByteFormat.string(Int(Double(uncompressed) / statistics.seconds)) + "/s" : "-"
        let threads = "\(statistics.threads) thread\(statistics.threads == 1 ? "" : "s")"
        let frames = "\(statistics.frames) frame\(statistics.frames == 1 ? "" : "s")"
        let bytes = "\(ByteFormat.string(statistics.bytesIn)) => \(ByteFormat.string(statistics.bytesOut))"
        let destination = output.map { ", \($0)" } ?? ""
        var line: String
        switch operation {
        case .compress:
            let percent = CFormat.string("%.2f%%", statistics.ratio * 100)
            line = "\(subject): \(percent) (\(bytes)\(destination)) in \(seconds), \(speed), \(threads)"
        case .decompress where output != nil:
            // zstd's words first (`NAME : N bytes`, the name padded to 20), which scripts grep.
            let padded = subject + String(repeating: " ", count: max(0, 20 - subject.count))
            line = "\(padded): \(statistics.bytesOut) bytes (\(bytes)\(destination)) in \(seconds), \(speed), \(frames)"
        case .decompress:
            line = "\(subject): \(bytes) in \(seconds), \(speed), \(frames)"
        case .test:
            line = "\(subject): \(allPassed ? "OK, " : "")\(bytes) in \(seconds), \(speed), \(frames)"
        }
        if statistics.resumedBytesIn > 0 {
            let done = operation == .compress ? statistics.resumedBytesIn : statistics.resumedBytesOut
            let total = operation == .compress ? statistics.bytesIn : statistics.bytesOut
            line += CFormat.string(", resumed at %.0f%%", 100 * Double(done) / Double(max(1, total)))
        }
        if verbose {
            line += CFormat.string(", cpu %.2f s, peak memory ", statistics.cpuSeconds)
                + ByteFormat.string(statistics.peakResidentBytes)
        }
        return line
    }
}
