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
        write(SummaryLine(job: job, statistics: statistics).text + "\n")
    }

    func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
