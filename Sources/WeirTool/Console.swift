import Weir
import WeirCLI

/// Everything the command prints on stderr: errors, warnings, summaries,
/// JSON statistics, and the progress line. stdout carries data only.
///
/// Every message goes through the progress display, which takes the live
/// line away first, so messages and the line never mix.
struct Console: Sendable {
    let quietness: Int
    let verbosity: Int
    /// The live progress line, when it is shown.
    let progress: ProgressDisplay?
    /// Whether summary lines are shown (see `WeirCommand.showsSummaries`:
    /// not with -q, unless --progress asks for them).
    let summaries: Bool

    init(quietness: Int, verbosity: Int, progress: ProgressDisplay? = nil, summaries: Bool = false) {
        self.quietness = quietness
        self.verbosity = verbosity
        self.progress = progress
        self.summaries = summaries
    }

    /// `weir: FILE: reason`, always shown.
    func error(_ message: String) {
        write("weir: \(message)\n")
    }

    /// `weir: warning: …`, hidden by -qq.
    func warning(_ message: String) {
        guard quietness < 2 else { return }
        write("weir: warning: \(message)\n")
    }

    /// `weir: FILE: warning: …`, about one input, hidden by -qq.
    func warning(_ message: String, file: String) {
        guard quietness < 2 else { return }
        write("weir: \(FileName.displayed(file)): warning: \(message)\n")
    }

    /// The line after each file, unless hidden; -v adds CPU time and peak memory.
    func summary(job: FileJob, statistics: Statistics) {
        guard summaries else { return }
        write(SummaryLine(job: job, statistics: statistics, verbose: verbosity > 0).text + "\n")
    }

    /// The total line after several files, unless hidden.
    func summary(totals: RunTotals) {
        guard summaries else { return }
        write(SummaryLine(totals: totals, verbose: verbosity > 0).text + "\n")
    }

    /// With -v, one line per folder where weir removed the temporaries of a
    /// weir cut short (``StaleTemporaries``). Taken in any case, so that
    /// each is told once.
    func staleTemporaries() {
        let reports = StaleTemporaries.takeReports()
        guard verbosity > 0 else { return }
        for report in reports {
            let files = report.removed == 1 ? "1 temporary file" : "\(report.removed) temporary files"
            write("weir: \(FileName.displayed(report.folder)): removed \(files) (.weir-XXXXXX) "
                + "left by a weir that was cut short\n")
        }
    }

    /// One JSON object on a line of its own (`--json`), shown even with -q.
    func json(_ record: JSONRecord) {
        write(record.line() + "\n")
    }

    /// Takes the progress line away for good (the signal paths, before exit).
    func stopProgress() {
        progress?.stop()
    }

    func write(_ text: String) {
        if let progress {
            progress.interrupt { StandardError.write(text) }
        } else {
            StandardError.write(text)
        }
    }
}
