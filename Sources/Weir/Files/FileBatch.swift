import Dispatch

/// Runs many file jobs side by side, reporting them in order.
///
/// The caller's thread makes the jobs, in order, up to `madeAhead` before
/// the last one taken. `width` threads of their own (not GCD workers: a job
/// blocks on its pipeline) each take the next job and run it with a
/// ``SmallFileCompressor`` of their own; a small file's output is handed to
/// DispatchIO and the thread takes the next job while it is written (up to
/// `maximumWrites` at once); each finished job is filed when it ends. The
/// caller's thread takes the finished jobs in job order into a
/// ``CommitQueue``, which commits their outputs in groups (one sync for
/// many files), and hands each outcome to `report` once committed. A tree of
/// small files thus keeps every core compressing across file boundaries,
/// while each file is still written, committed, and reported as when it runs
/// alone.
///
/// Cancelled, the threads take no new job and the running ones stop; jobs
/// not yet committed are discarded and not reported.
package enum FileBatch {
    /// The outcome of one job.
    package typealias Outcome = FileJob.Outcome

    /// The most small files' outputs being written at once: each holds its
    /// compressed bytes (at most about ``SmallFileCompressor/maximumSize``)
    /// and an open temporary file until its write ends and it is committed.
    /// Enough to keep libdispatch's queues busy (fewer idle threads woken
    /// per write), few enough for the memory and descriptors.
    static let maximumWrites = 16

    /// How many jobs the calling thread makes ahead of the threads taking
    /// them: the list of a large tree is never held whole.
    static let madeAhead = 64

    /// Runs `count` jobs on `width` threads. Calls `make` for each job, in
    /// order and a few ahead of the threads, and `report` once per job
    /// started, in order, once its output is committed (synced unless `sync`
    /// is false), both on the calling thread; a job `make` fails to make is
    /// reported with its error.
    package static func run(count: Int, width: Int, cancellation: Cancellation, sync: Bool = true,
                            make: (Int) -> Result<FileJob, WeirError>,
                            report: (Int, Result<FileJob, WeirError>, Outcome) -> Void) {
        let board = Board()
        let writes = DispatchSemaphore(value: maximumWrites)
        let threads = max(1, min(width, count))
        board.lock.lock()
        board.running = threads
        board.lock.unlock()
        for _ in 0 ..< threads {
            DedicatedThread.start(name: "weir.files") {
                let smallFiles = SmallFileCompressor()
                while true {
                    board.lock.lock()
                    while board.exclusive || (board.next == board.made && board.made < count && !cancellation.isCancelled) {
                        board.lock.wait()
                    }
                    let index = board.next
                    guard index < count, !cancellation.isCancelled else {
                        board.running -= 1
                        board.lock.broadcast()
                        board.lock.unlock()
                        return
                    }
                    let made = board.waiting.removeValue(forKey: index)!
                    board.next += 1
                    board.active += 1
                    // Half the jobs made ahead are taken: the calling thread makes more.
                    if board.made - board.next == madeAhead / 2 { board.lock.broadcast() }
                    board.lock.unlock()
                    let job: FileJob
                    switch made {
                    case .success(let madeJob): job = madeJob
                    case .failure(let error):
                        board.finish(index, made, .failure(error), alone: false)
                        continue
                    }
                    // A job with a pipeline of its own runs alone: it keeps
                    // every core busy itself, and two would double the memory.
                    let alone = !isSmall(job)
                    if alone {
                        board.lock.lock()
                        board.active -= 1
                        board.lock.broadcast()  // a job waiting to run alone may now start
                        while board.exclusive { board.lock.wait() }
                        board.exclusive = true
                        while board.active > 0 { board.lock.wait() }
                        board.active += 1
                        board.lock.unlock()
                    }
                    // A small file's write is DispatchIO's: the thread goes
                    // on with the next file once it is handed over.
                    if !alone { writes.wait() }
                    job.start(cancellation: cancellation, smallFiles: smallFiles, sync: sync) { outcome in
                        board.finish(index, made, outcome, alone: alone)
                        if !alone { writes.signal() }
                    }
                }
            }
        }
        // Groups of outputs are committed on a thread of their own; the
        // calling thread hands them off and reports what comes back.
        let commits = CommitQueue(sync: sync) {
            board.lock.lock()
            board.lock.broadcast()
            board.lock.unlock()
        }
        var made: [Int: Result<FileJob, WeirError>] = [:]
        func reportCommitted() {
            for (index, outcome) in commits.committed() { report(index, made.removeValue(forKey: index)!, outcome) }
        }
        for index in 0 ..< count {
            board.lock.lock()
            // Wait for this job, unless it will never run (cancelled); make
            // jobs whenever fewer than `madeAhead` wait to be taken; hand
            // off the finished ones when due; report the committed ones.
            while board.done[index] == nil && !(board.running == 0 && board.next <= index) {
                if board.made < count, board.made - board.next < madeAhead, !cancellation.isCancelled {
                    let next = board.made
                    board.lock.unlock()
                    let job = make(next)
                    board.lock.lock()
                    board.waiting[next] = job
                    board.made += 1
                    board.lock.broadcast()
                } else if commits.hasCommitted, !cancellation.isCancelled {
                    board.lock.unlock()
                    reportCommitted()
                    board.lock.lock()
                } else if commits.isDue, !cancellation.isCancelled, commits.handOff() {
                    continue
                } else if let deadline = commits.deadline, !commits.isCommitting {
                    board.lock.wait(until: deadline)
                } else {
                    board.lock.wait()
                }
            }
            let outcome = board.done.removeValue(forKey: index)
            board.lock.unlock()
            guard let outcome, !cancellation.isCancelled else { break }
            made[index] = outcome.job
            if commits.isFull { commits.waitForCommitting() }
            commits.add(index, outcome.outcome)
            if commits.isDue { commits.handOff() }
            reportCommitted()
        }
        if cancellation.isCancelled {
            commits.discard()
        } else {
            for (index, outcome) in commits.commitAll() { report(index, made.removeValue(forKey: index)!, outcome) }
        }
        // The threads end on their own; wait for them so no job outlives the run.
        board.lock.lock()
        while board.running > 0 || board.active > 0 { board.lock.wait() }
        board.lock.unlock()
    }

    /// Whether `input` may be handled fast: a regular file no larger than a
    /// small file (``SmallFileCompressor/maximumSize``), whatever is done to it.
    package static func mayBeSmall(_ input: String) -> Bool {
        guard input != "-", let status = FileStatus.of(path: input), status.isRegularFile else { return false }
        return status.size <= SmallFileCompressor.maximumSize
    }

    /// Whether `job` compresses a regular file small enough for
    /// ``SmallFileCompressor``; any other job runs alone.
    static func isSmall(_ job: FileJob) -> Bool {
        guard case .compress(let options) = job.operation, case .file = job.destination,
              let status = FileStatus.of(path: job.input), status.isRegularFile else { return false }
        return SmallFileCompressor.accepts(size: status.size, options: options)
    }

    /// What the threads share, behind `lock`.
    /// `@unchecked`: every field is touched only with `lock` held.
    private final class Board: @unchecked Sendable {
        let lock = ConditionLock()
        /// The next job to take; jobs `next..<made` are made and waiting.
        var next = 0
        var made = 0
        var running = 0
        /// Jobs being run.
        var active = 0
        /// A job that runs alone is waiting or running: no other starts.
        var exclusive = false
        /// Jobs made and not yet taken, by index.
        var waiting: [Int: Result<FileJob, WeirError>] = [:]
        var done: [Int: (job: Result<FileJob, WeirError>, outcome: Result<FinishedJob, WeirError>)] = [:]

        /// Files the outcome of job `index` and wakes whoever waits for it.
        func finish(_ index: Int, _ job: Result<FileJob, WeirError>, _ outcome: Result<FinishedJob, WeirError>,
                    alone: Bool) {
            lock.lock()
            done[index] = (job, outcome)
            active -= 1
            if alone { exclusive = false }
            lock.broadcast()
            lock.unlock()
        }
    }
}
