import DequeModule
import Dispatch
import WeirSystem

/// Runs jobs on a concurrent queue with at most `width` of them at a time,
/// each with a context (a libzstd `ZSTD_CCtx` or `ZSTD_DCtx`) of its own.
///
/// A GCD worker must never block waiting for work, so the pool does not park
/// threads: `submit` queues the job and, when fewer than `width` drain loops
/// are running, starts one on the concurrent queue. A drain loop takes a
/// context from the idle list (or makes one, at most `width` in all), runs
/// jobs until the queue is empty, gives the context back and ends. Contexts
/// thus live as long as the pool and are reused by every frame.
///
/// Threads: `state` (the job FIFO, the number of running loops and the idle
/// contexts) is guarded by its lock; jobs run on `queue`, outside the lock.
package final class WorkerPool<Context: AnyObject>: Sendable {
    /// A job gets the loop's context, or nil when none could be made (the
    /// failure has then been reported and the job only has to give up).
    package typealias Job = (Context?) -> Void

    /// The queued jobs (each holds its chunk or buffer) and the idle contexts.
    private struct State: @unchecked Sendable {  // jobs, contexts: each leaves, under the lock, to one drain loop
        var jobs = Deque<Job>()
        var running = 0
        var idle: [Context] = []
    }

    let width: Int
    private let queue: DispatchQueue
    private let makeContext: @Sendable () throws(WeirError) -> Context
    private let onContextFailure: @Sendable (WeirError) -> Void
    private let state = Locked(State())

    /// - Parameters:
    ///   - width: the most jobs that run at once (`-T`).
    ///   - makeContext: creates a context; called at most `width` times.
    ///   - onContextFailure: called when a context cannot be made; that loop's
    ///     jobs then run with a nil context.
    package init(width: Int, label: String,
                 makeContext: @escaping @Sendable () throws(WeirError) -> Context,
                 onContextFailure: @escaping @Sendable (WeirError) -> Void) {
        self.width = max(1, width)
        self.queue = DispatchQueue(label: label, qos: .userInitiated, attributes: .concurrent)
        self.makeContext = makeContext
        self.onContextFailure = onContextFailure
    }

    /// Queues `job`; it runs on the concurrent queue with a context.
    package func submit(_ job: @escaping Job) {
        let startLoop = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.running < width else { return false }
            state.running += 1
            return true
        }
        if startLoop { queue.async { self.drain() } }
    }

    private func drain() {
        var context = state.withLock { $0.idle.popLast() }
        if context == nil {
            do throws(WeirError) {
                context = try makeContext()
            } catch {
                onContextFailure(error)
            }
        }
        while true {
            let job: Job? = state.withLock { state in
                // A job leaves the FIFO as it starts, so a finished job (and
                // the chunk it captured) is never kept alive by the queue.
                guard let job = state.jobs.popFirst() else {
                    state.running -= 1
                    if let context { state.idle.append(context) }
                    return nil
                }
                return job
            }
            guard let job else { return }
            job(context)
        }
    }
}
