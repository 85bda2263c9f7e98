import Weir
import WeirRemote
import WeirCLI
import Glibc
import SystemPackage

/// Tells the user how the inputs go: the progress line while each one runs,
/// then its summary line or JSON object, failures included, and a total
/// after several inputs.
///
/// Used by the main thread only (the display it drives has its own lock).
final class RunReporter {
    /// How the outcome of each input is written.
    enum Format {
        /// A summary line (hidden by -q), errors as `weir: FILE: reason`.
        case human
        /// One JSON object per input, errors included, and a total object.
        case json
    }

    private let console: Console
    private let format: Format
    /// Every input: those the run takes, and those left out before it.
    private let inputs: Int
    /// The inputs left out before the run (symbolic links, `--exclude-compressed`'s),
    /// numbered first under `--progress=json`; the run's inputs come after them.
    private let skippedBeforeRun: [String]
    private let sizeHint: Int?
    private let compression: CompressionOptions?
    private var totals: RunTotals
    /// The observer of a run that reports level changes without a progress
    /// line (`--adapt -v`), finished with its file.
    private var levelsOnly: ProgressObserver?
    /// The inputs (from 1) whose progress began: the others' `end` object,
    /// under `--progress=json`, is written when they are reported.
    private var begun: Set<Int> = []

    /// - Parameters:
    ///   - console: where everything is written; its progress display, if
    ///     any, draws the live line.
    ///   - operation: what is done to every input.
    ///   - inputs: how many inputs there are.
    ///   - sizeHint: the size of an input whose size cannot be known (a pipe).
    ///   - compression: the options when compressing, for the JSON of an
    ///     input that failed before its job was made.
    ///   - skipped: the inputs left out before the run, each given its
    ///     `end` object (status `skipped`) by ``endSkippedBeforeRun()``.
    init(console: Console, format: Format, operation: OperationKind, inputs: Int, skipped: [String] = [],
         sizeHint: Int?, compression: CompressionOptions?) {
        self.console = console
        self.compression = compression
        self.format = format
        self.inputs = inputs + skipped.count
        skippedBeforeRun = skipped
        self.sizeHint = sizeHint
        totals = RunTotals(operation: operation)
    }

    /// Starts the progress line of `job`, the `file`th input (from 1, for
    /// `(n/N)`); returns the observer to give it, nil when no line is shown.
    func started(_ job: FileJob, file number: Int) -> ProgressObserver? {
        let file = number + skippedBeforeRun.count
        begun.insert(file)
        let levels = levelReport(for: job)
        guard let progress = console.progress else {
            guard let levels else { return nil }
            // Never reports totals: only the level changes are wanted.
            let observer = ProgressObserver(interval: 3600, handler: { _ in }, levelChanged: levels)
            observer.activate()
            levelsOnly = observer
            return observer
        }
        return progress.begin(name: FileName.displayed(job.inputName), file: file, files: inputs,
                              total: Self.size(of: job.input) ?? sizeHint, mode: OperationKind(job.operation),
                              jsonName: job.input, level: compression?.level, levelChanged: levels,
                              arrives: Self.size(of: job.input) == nil)
    }

    /// With `--adapt -v`, what tells the user of each level change (and,
    /// from -vvvv, zstd's own words for it); nil otherwise.
    private func levelReport(for job: FileJob) -> (@Sendable (LevelChange) -> Void)? {
        guard compression?.adaptiveLevels != nil, console.verbosity >= 1 else { return nil }
        let console = console
        let name = FileName.displayed(job.inputName)
        return { change in
            var text = "weir: \(name): \(LevelChangeLine.text(change))\n"
            if console.verbosity >= 4 { text += LevelChangeLine.zstdText(change) + " \n" }
            console.write(text)
        }
    }

    /// Takes the progress line away: its file is done (`status` says how),
    /// its report may come later.
    func endProgress(_ status: ProgressRecord.Status = .ok) {
        console.progress?.end(status: status)
        levelsOnly?.finish()
        levelsOnly = nil
    }

    /// Ends the progress line, then reports a success: its warnings (in its
    /// JSON object with `--json`), then its summary.
    func succeeded(_ job: FileJob, _ statistics: Statistics) {
        endProgress(.ok)
        totals.add(job, statistics)
        switch format {
        case .human:
            console.staleTemporaries()
            for warning in statistics.warnings { console.warning(warning, file: job.inputName, input: job.input) }
            console.summary(job: job, statistics: statistics)
        case .json:
            // The progress stream tells its warnings as events too.
            if console.events {
                for warning in statistics.warnings { console.warning(warning, file: job.inputName, input: job.input) }
            }
            console.json(JSONRecord(job: job, statistics: statistics))
        }
    }

    /// Ends the progress line, then reports a failure. `job` is nil when the
    /// input failed before its job was made (its output is then unknown).
    ///
    /// - Parameter quietPipe: a closed downstream pipe with -q: no message.
    func failed(input: String, file: Int, job: FileJob?, error: WeirError, quietPipe: Bool) {
        // A URL's stream ended early by the network: what the server said, not the truncation seen.
        let error = RemoteInputs.failure(for: input) ?? error
        endProgress(.error)
        endUnbegun(input: input, file: file + skippedBeforeRun.count, status: .error)
        totals.addFailure()
        switch format {
        case .human:
            console.staleTemporaries()
            if !quietPipe { console.error(CommandHint.message(for: error), input: input) }
        case .json:
            // The progress stream tells its errors as events too.
            if console.events { console.error(CommandHint.message(for: error), input: input) }
            var statistics = Statistics()
            statistics.peakResidentBytes = ResourceUsage.current().peakResidentBytes
            if let job {
                console.json(JSONRecord(job: job, statistics: statistics, error: CommandHint.message(for: error)))
            } else {
                statistics.threads = compression?.resolvedThreads ?? 1
                console.json(JSONRecord(operation: totals.operation, input: input, output: nil, statistics: statistics,
                                        level: compression?.level, chunkBytes: compression?.chunkSize,
                                        error: CommandHint.message(for: error)))
            }
        }
    }

    /// Ends the progress line, then reports an input skipped, not failed:
    /// its output is already its finished compression (`error` says so,
    /// hidden by -q; with `--json`, an object whose status is `"skipped"`).
    func skipped(input: String, file: Int, error: WeirError) {
        console.progress?.end(status: .skipped)
        endUnbegun(input: input, file: file + skippedBeforeRun.count, status: .skipped)
        switch format {
        case .human:
            if console.quietness == 0 { console.note(CommandHint.message(for: error), input: input) }
        case .json:
            var record = JSONRecord(operation: totals.operation, input: input, output: nil, statistics: Statistics(),
                                    level: compression?.level, chunkBytes: compression?.chunkSize)
            record.status = .skipped
            console.json(record)
        }
    }

    /// Under `--progress=json`, the `end` object of an input whose work
    /// never began (refused or skipped before it): every input gets one.
    /// Under `--progress=json`, the `end` objects (status `skipped`) of the
    /// inputs left out before the run, numbered first.
    func endSkippedBeforeRun() {
        for (index, input) in skippedBeforeRun.enumerated() {
            endUnbegun(input: input, file: index + 1, status: .skipped)
        }
    }

    private func endUnbegun(input: String, file: Int, status: ProgressRecord.Status) {
        guard let progress = console.progress, progress.json, !begun.contains(file) else { return }
        begun.insert(file)
        let mode = totals.operation
        _ = progress.begin(name: FileName.displayed(input == "-" ? "(stdin)" : input), file: file, files: inputs,
                           total: nil, mode: mode, jsonName: input, level: mode == .compress ? compression?.level : nil)
        progress.end(status: status)
    }

    /// Ends the progress line; then, after several inputs and unless a
    /// signal cut the run short, the total.
    func finish(cancelled: Bool) {
        endProgress()
        guard !cancelled, inputs > 1, totals.inputs > 1 else { return }
        switch format {
        case .human: console.summary(totals: totals)
        case .json: console.json(JSONRecord(totals: totals))
        }
    }

    /// The size of an input when it is a regular file (also stdin redirected
    /// from one), for the percentage; nil for pipes and terminals.
    static func size(of input: String) -> Int? {
        if input == "-" { return InputKind.of(Descriptor(STDIN_FILENO, path: input)).size }
        guard let status = FileStatus.of(path: input), status.isRegularFile,
              !InputKind.sizeIsUntrusted(path: input) else { return nil }
        return status.size
    }
}
