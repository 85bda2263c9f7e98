import WeirPipeline
import WeirSystem

/// How the jobs of a run go, decided in one place: side by side
/// (``FileBatch``) when that changes nothing a user sees, else one by one,
/// each job with the whole machine.
///
/// Side by side: compressing several files, each into a file of its own, on
/// more than one thread, with nothing followed live (a progress line follows
/// one file), every job made (the error of one that cannot be made comes in
/// order in a one-by-one run), and no output that is another job's input or
/// output (their order would matter). One by one otherwise: `-c`, `-o`,
/// standard input, decompression, tests, a progress line on screen.
///
/// Either way every job goes through ``FileJob`` (temporary file then
/// rename, `-f` rules) and a ``CommitQueue`` commits the outputs in groups
/// on a thread of its own (one sync for many small files; `--rm` only once
/// the output is durable); outcomes are reported in input order once
/// committed. Cancelled, the jobs not yet committed are discarded and not
/// reported.
package enum JobScheduler {
    /// The outcome of one job.
    package typealias Outcome = FileJob.Outcome

    /// Runs the jobs of `inputs`, side by side or one by one (above),
    /// asking `delegate` for them and telling it of each.
    ///
    /// - Parameters:
    ///   - width: how many jobs may go side by side (the compression's
    ///     workers; 1 when not compressing).
    ///   - followedLive: whether a progress line follows each job.
    ///   - sync: whether outputs are synced.
    package static func run(_ inputs: [String], width: Int, followedLive: Bool, cancellation: Cancellation,
                            sync: Bool, delegate: any JobSchedulerDelegate) {
        guard goesSideBySide(inputs, width: width, followedLive: followedLive, plan: delegate.plannedJob) else {
            runOneByOne(inputs, cancellation: cancellation, sync: sync, delegate: delegate)
            return
        }
        FileBatch.run(count: inputs.count, width: width, cancellation: cancellation, sync: sync,
                      make: delegate.makeJob) { index, job, outcome in
            // A job the cancellation stopped is not reported, unless it kept something.
            if case .failure(let error) = outcome, cancellation.isCancelled, error.hint != .resume { return }
            delegate.report(index, made: job, outcome: outcome)
        }
    }

    /// Whether the jobs of `inputs` can go side by side (see the type).
    /// Looks at the names only: the jobs are made again as the threads need
    /// them.
    static func goesSideBySide(_ inputs: [String], width: Int, followedLive: Bool,
                               plan: (Int) -> FileJob?) -> Bool {
        guard inputs.count > 1, width > 1, !followedLive else { return false }
        // Hashes, not names: a tree's output names would be held all at once
        // (about 10 MiB for the 78,579 files of the Linux tree). Two names
        // of one hash only send the run one by one.
        var names = Set(inputs.map { ExactName(name: $0).hashValue })
        for index in inputs.indices {
            guard let job = plan(index), job.input != "-", case .compress = job.operation,
                  case .file(let path) = job.destination,
                  names.insert(ExactName(name: path).hashValue).inserted else { return false }
        }
        return true
    }

    /// Runs the jobs one after the other, each with the whole machine; their
    /// outputs are committed in groups on a thread of their own, a group
    /// handed off when due and before any job that may take long (its
    /// reports would wait for that job), the rest at the end.
    private static func runOneByOne(_ inputs: [String], cancellation: Cancellation, sync: Bool,
                                    delegate: any JobSchedulerDelegate) {
        let smallFiles = SmallFileCompressor()
        let commits = CommitQueue(sync: sync)
        var made = UncommittedJobs()
        func reportCommitted(_ outcomes: [(tag: Int, outcome: Outcome)]) {
            for (index, outcome) in outcomes {
                delegate.report(index, made: made.take(index), outcome: outcome)
            }
        }
        jobs: for (index, input) in inputs.enumerated() {
            if cancellation.isCancelled { break }
            if !mayBeSmall(input) {
                commits.waitForCommitting()
                commits.handOff()
            }
            let job = delegate.makeJob(index)
            made[index] = job
            switch job {
            case .success(let job):
                let finished = Result { () throws(WeirError) in
                    try job.process(observer: delegate.jobStarted(index, job), cancellation: cancellation,
                                    smallFiles: smallFiles, sync: sync)
                }
                delegate.jobEnded(succeeded: (try? finished.get()) != nil)
                if case .failure(let error) = finished, cancellation.isCancelled {
                    // Stopped: said only when something is kept for the next run.
                    if error.hint == .resume { delegate.report(index, made: .success(job), outcome: .failure(error)) }
                    break jobs
                }
                if commits.isFull { commits.waitForCommitting() }
                commits.add(index, finished)
            case .failure(let error):
                commits.add(index, .failure(error))
            }
            if commits.isDue { commits.handOff() }
            reportCommitted(commits.committed())
        }
        if cancellation.isCancelled {
            commits.discard()
        } else {
            reportCommitted(commits.commitAll())
        }
    }

    /// Whether `input` may be handled fast: a regular file no larger than a
    /// small file (``SmallFileCompressor/maximumSize``), whatever is done to it.
    static func mayBeSmall(_ input: String) -> Bool {
        guard input != "-", let status = FileStatus.of(path: input), status.isRegularFile,
              !InputKind.sizeIsUntrusted(path: input) else { return false }
        return status.size <= SmallFileCompressor.maximumSize
    }
}
