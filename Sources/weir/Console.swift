import Foundation
import Weir

/// Everything the command prints on stderr: errors, warnings, summaries.
/// stdout carries data only.
struct Console: Sendable {
    let quietness: Int
    let verbosity: Int

    /// `weir: FILE: reason`, always shown.
    func error(_ message: String) {
        write("weir: \(message)\n")
    }

    /// `weir: warning: …`, hidden by -qq.
    func warning(_ message: String) {
        guard quietness < 2 else { return }
        write("weir: warning: \(message)\n")
    }

    /// The line after each file, hidden by -q.
    func summary(job: FileJob, statistics: Statistics, level: Int) {
        guard quietness == 0 else { return }
        var line = SummaryLine(job: job, statistics: statistics).text
        if verbosity > 0 {
            let usage = ResourceUsage.current()
            line += String(format: ", cpu %.2f s, peak memory %@", usage.cpuSeconds, ByteFormat.string(usage.peakResidentBytes))
        }
        write(line + "\n")
    }

    func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
