import Dispatch
import WeirPipeline
import WeirSystem

/// Runs many file jobs side by side, reporting them in order; when they may
/// go so, ``JobScheduler`` decides.
///
/// Three parts, each with its own lock:
/// - a ``JobQueue``: the caller's thread makes the jobs, in order, up to
///   `madeAhead` before the last one taken; `width` threads of their own
///   (not GCD workers: a job blocks on its pipeline) take them;
/// - an ``ExclusiveGate``: a small file's job (``SmallFileCompressor``, one
///   per thread, its output written with one `pwrite`) goes beside others;
///   any other job has a pipeline that keeps every core busy itself, and
///   goes alone (two would also double the memory);
/// - ``InOrderArrivals``: each job's outcome is delivered when it ends; the
///   caller's thread takes them in job order into a ``CommitQueue``, which
///   commits their outputs in groups (one sync for many files) on a thread of
///   its own, and hands each outcome to `report` once committed.
///
/// A tree of small files thus keeps every core compressing across file
/// boundaries, while each file is still written, committed, and reported as
/// when it runs alone. Cancelled, the queue closes, the running jobs stop,
/// and jobs not yet committed are discarded and not reported.
package enum FileBatch {
    /// The outcome of one job.
    package typealias Outcome = FileJob.Outcome

    /// How many jobs the calling thread makes ahead of the threads taking
    /// them: the list of a large tree is never held whole.
    static let madeAhead = 64

    /// A job as made, and its outcome once run.
    private typealias Arrival = (job: Result<FileJob, WeirError>, outcome: Result<FinishedJob, WeirError>)

    /// Runs `count` jobs on `width` threads. Calls `make` for each job, in
    /// order and a few ahead of the threads, and `report` once per job
    /// started, in order, once its output is committed (synced unless `sync`
    /// is false), both on the calling thread; a job `make` fails to make is
    /// reported with its error.
    package static func run(count: Int, width: Int, cancellation: Cancellation, sync: Bool = true,
                            make: (Int) -> Result<FileJob, WeirError>,
                            report: (Int, Result<FileJob, WeirError>, Outcome) -> Void) {
        let arrivals = InOrderArrivals<Arrival>()
        let queue = JobQueue<Result<FileJob, WeirError>>(count: count, ahead: madeAhead) { arrivals.wake() }
        let stop = cancellation.attach {
            queue.close()
            arrivals.wake()
        }
        defer { cancellation.detach(stop) }
        // The threads taking jobs.
        let running = DispatchGroup()
        startThreads(max(1, min(width, count)), queue: queue, arrivals: arrivals, running: running,
                     cancellation: cancellation, sync: sync)
        let commits = CommitQueue(sync: sync) { arrivals.wake() }
        var made = UncommittedJobs()
        func reportCommitted() {
            for (index, outcome) in commits.committed() { report(index, made.take(index), outcome) }
        }
        for index in 0 ..< count {
            // Until this job's outcome: make jobs the queue wants, report
            // committed ones, hand off a due group, else wait for any of it.
            var arrival: Arrival?
            while !cancellation.isCancelled {
                let seen = arrivals.wakeCount
                while let next = queue.wanted { queue.put(make(next)) }
                arrival = arrivals.take(index)
                if arrival != nil { break }
                if commits.hasCommitted {
                    reportCommitted()
                } else if !commits.isDue || !commits.handOff() {
                    arrivals.wait(for: index, past: seen, until: commits.isCommitting ? nil : commits.deadline)
                }
            }
            guard let arrival, !cancellation.isCancelled else { break }
            made[index] = arrival.job
            if commits.isFull { commits.waitForCommitting() }
            commits.add(index, arrival.outcome)
            if commits.isDue { commits.handOff() }
            reportCommitted()
        }
        if cancellation.isCancelled {
            commits.discard()
            running.wait()
            // Stopped: a job that kept its output for the next run says so
            // (a stopped `-r` then names its `.part`); no other is reported.
            for (index, arrival) in arrivals.takeAll() {
                if case .failure(let error) = arrival.outcome, error.hint == .resume {
                    report(index, arrival.job, .failure(error))
                }
            }
        } else {
            for (index, outcome) in commits.commitAll() { report(index, made.take(index), outcome) }
        }
        // No job outlives the run.
        running.wait()
    }

    /// Starts `threads` threads that take jobs from `queue` until it is
    /// empty or closed, and deliver each outcome to `arrivals`.
    private static func startThreads(_ threads: Int, queue: JobQueue<Result<FileJob, WeirError>>,
                                     arrivals: InOrderArrivals<Arrival>, running: DispatchGroup,
                                     cancellation: Cancellation, sync: Bool) {
        let gate = ExclusiveGate()
        for _ in 0 ..< threads {
            running.enter()
            DedicatedThread.start(name: "weir.files") {
                defer { running.leave() }
                let smallFiles = SmallFileCompressor()
                while let (index, made) = queue.take() {
                    let job: FileJob
                    switch made {
                    case .success(let madeJob): job = madeJob
                    case .failure(let error):
                        arrivals.deliver(index, (made, .failure(error)))
                        continue
                    }
                    let alone = !isSmall(job)
                    gate.enter(alone: alone)
                    let outcome = Result { () throws(WeirError) in
                        try job.process(cancellation: cancellation, smallFiles: smallFiles, sync: sync)
                    }
                    gate.leave(alone: alone)
                    arrivals.deliver(index, (made, outcome))
                }
            }
        }
    }

    /// Whether `job` compresses a regular file small enough for
    /// ``SmallFileCompressor``; any other job runs alone.
    static func isSmall(_ job: FileJob) -> Bool {
        guard case .compress(let options) = job.operation, case .file = job.destination,
              let status = FileStatus.of(path: job.input), status.isRegularFile,
              !InputKind.sizeIsUntrusted(path: job.input) else { return false }
        return SmallFileCompressor.accepts(size: status.size, options: options)
    }
}
