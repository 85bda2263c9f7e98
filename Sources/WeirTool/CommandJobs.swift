import Weir
import WeirCLI
import WeirFiles

/// The `weir` command's side of a run's jobs (``JobSchedulerDelegate``):
/// each input's job made from the flags, the progress line and the report of
/// each outcome, and whether any failed (the exit status).
final class CommandJobs: JobSchedulerDelegate {
    private let settings: RunSettings
    private let inputs: [String]
    private let dictionary: ZstdDictionary?
    private let compression: CompressionOptions?
    /// The old file of `--patch-from`, read once.
    private let patch: PatchReference?
    private let console: Console
    /// Several inputs written into one `-o` file in turn.
    private let shared: OutputFile?
    private let reporter: RunReporter
    /// Whether a job failed (a skipped one did not).
    private(set) var failed = false

    init(settings: RunSettings, inputs: [String], dictionary: ZstdDictionary?, compression: CompressionOptions?,
         patch: PatchReference? = nil, console: Console, shared: OutputFile?, reporter: RunReporter) {
        self.patch = patch
        self.settings = settings
        self.inputs = inputs
        self.dictionary = dictionary
        self.compression = compression
        self.console = console
        self.shared = shared
        self.reporter = reporter
    }

    func plannedJob(_ index: Int) -> FileJob? {
        try? settings.makeJob(for: inputs[index], dictionary: dictionary, compression: compression, patch: patch,
                             console: console)
    }

    func makeJob(_ index: Int) -> Result<FileJob, WeirError> {
        Result { () throws(WeirError) in
            try settings.makeJob(for: inputs[index], dictionary: dictionary, compression: compression, patch: patch,
                                console: console, shared: shared, asking: true)
        }
    }

    func jobStarted(_ index: Int, _ job: FileJob) -> ProgressObserver? {
        reporter.started(job, file: index + 1)
    }

    func jobEnded(succeeded: Bool) {
        reporter.endProgress(succeeded ? .ok : .error)
    }

    func report(_ index: Int, made: Result<FileJob, WeirError>, outcome: FileJob.Outcome) {
        switch (made, outcome) {
        case (.success(let job), .success(let statistics)):
            reporter.succeeded(job, statistics)
        case (_, .failure(let error)) where error.kind == .alreadyCompressed:
            reporter.skipped(input: inputs[index], file: index + 1, error: error)
        case (_, .failure(let error)):
            failed = true
            reporter.failed(input: inputs[index], file: index + 1, job: try? made.get(), error: error,
                            quietPipe: error.isBrokenPipe && settings.reporting.quiet > 0)
        case (.failure, .success): break  // a job not made has no statistics
        }
    }
}
