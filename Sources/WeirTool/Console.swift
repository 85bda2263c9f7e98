import Weir
import WeirCLI
import WeirFiles

/// Everything the command prints on stderr: errors, warnings, summaries,
/// JSON statistics, and the progress line. stdout carries data only.
///
/// Every message goes through the progress display, which takes the live
/// line away first, so messages and the line never mix.
///
/// With `--progress=json` (`events`), every line is one JSON object: an
/// error or a warning is a ``MessageRecord`` naming its input, any other
/// line a note, and there is no summary line (each file's `end` record is
/// its summary).
struct Console: Sendable {
    let quietness: Int
    let verbosity: Int
    /// The live progress line, when it is shown.
    let progress: ProgressDisplay?
    /// Whether summary lines are shown (see `WeirCommand.showsSummaries`:
    /// not with -q, unless --progress asks for them; never in `events`).
    let summaries: Bool
    /// Every line a JSON object (`--progress=json`).
    let events: Bool

    init(quietness: Int, verbosity: Int, progress: ProgressDisplay? = nil, summaries: Bool = false,
         events: Bool = false) {
        self.quietness = quietness
        self.verbosity = verbosity
        self.progress = progress
        self.summaries = summaries && !events
        self.events = events
    }

    /// `weir: FILE: reason`, always shown; `input` is the input it is about.
    func error(_ message: String, input: String? = nil) {
        if events { return write(MessageRecord(event: .error, input: input, message: message, status: 1)) }
        write("weir: \(message)\n")
    }

    /// `weir: warning: …`, hidden by -qq.
    func warning(_ message: String) {
        guard quietness < 2 else { return }
        if events { return write(MessageRecord(event: .warning, input: nil, message: message)) }
        write("weir: warning: \(message)\n")
    }

    /// `weir: FILE: warning: …`, about one input, hidden by -qq; `input`
    /// names it in JSON when `file` is only its shown name (`(stdin)`).
    func warning(_ message: String, file: String, input: String? = nil) {
        guard quietness < 2 else { return }
        if events {
            return write(MessageRecord(event: .warning, input: input ?? file,
                                       message: "\(FileName.displayed(file)): \(message)"))
        }
        write("weir: \(FileName.displayed(file)): warning: \(message)\n")
    }

    /// `weir: message`, about `input`: a note, not a failure.
    func note(_ message: String, input: String?) {
        if events { return write(MessageRecord(event: .note, input: input, message: message)) }
        write("weir: \(message)\n")
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

    private func write(_ record: MessageRecord) {
        write(record.line() + "\n")
    }

    /// Writes `text`; in `events`, each line that is not a JSON object as a note.
    func write(_ text: String) {
        var text = text
        if events, !text.hasPrefix("{") {
            text = MessageRecord.notes(in: text).map { $0.line() + "\n" }.joined()
        }
        if let progress {
            progress.interrupt { StandardError.write(text) }
        } else {
            StandardError.write(text)
        }
    }
}
