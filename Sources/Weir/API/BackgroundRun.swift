import Dispatch
import WeirPipeline
import WeirSystem

/// Runs one blocking pipeline run for the public API, on a thread of its
/// own, and hands its outcome back to a completion handler or to an `async`
/// caller.
///
/// A pipeline's `run()` blocks its caller on semaphores until the last byte
/// is written, so it must never run on a GCD worker or on Swift
/// concurrency's cooperative pool (a few blocked workers would starve the
/// pool). Each run therefore gets a new thread (``DedicatedThread``); the async form suspends on
/// a continuation that the thread resumes, and task cancellation reaches the
/// run through a ``Cancellation``.
enum BackgroundRun {
    /// One run: given the handle that may cancel it, runs to the end on the
    /// calling (dedicated) thread.
    typealias Work = @Sendable (Cancellation) -> Result<Statistics, WeirError>

    /// Starts `work` on a new thread; `completion` then runs on `queue`.
    ///
    /// - Returns: the handle that cancels the run.
    static func start(name: String, queue: DispatchQueue, cancellation: Cancellation = Cancellation(),
                      completion: @escaping @Sendable (Result<Statistics, WeirError>) -> Void,
                      work: @escaping Work) -> Cancellation {
        DedicatedThread.start(name: name) {
            let result = work(cancellation)
            queue.async { completion(result) }
        }
        return cancellation
    }

    /// Runs `work` on a new thread and waits for it without blocking the
    /// caller's thread; cancelling the task cancels the run, which then
    /// throws a `.cancelled` `WeirError`.
    static func run(name: String, work: @escaping Work) async throws(WeirError) -> Statistics {
        let cancellation = Cancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Statistics, WeirError>, Never>) in
                DedicatedThread.start(name: name) {
                    continuation.resume(returning: work(cancellation))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// The work of running `job`, activating and finishing `progress` around it.
    static func file(_ job: FileJob, progress: ProgressObserver?) -> Work {
        { cancellation in
            progress?.activate()
            defer { progress?.finish() }
            do throws(WeirError) {
                let statistics = try job.run(observer: progress, cancellation: cancellation)
                return .success(statistics)
            } catch {
                return .failure(error)
            }
        }
    }

    /// The work of running the pipeline `make` returns, activating and
    /// finishing `progress` around it.
    static func pipeline(progress: ProgressObserver?,
                         make: @escaping @Sendable () -> any BlockingPipeline) -> Work {
        { cancellation in
            let pipeline = make()
            progress?.activate()
            defer { progress?.finish() }
            let key = cancellation.attach { pipeline.cancel() }
            defer { cancellation.detach(key) }
            do throws(WeirError) {
                return .success(try pipeline.run())
            } catch {
                return .failure(error)
            }
        }
    }
}
