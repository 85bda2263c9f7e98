import Dispatch

/// Runs async work to its end from a synchronous caller (libFuzzer's
/// thread, never a cooperative-pool thread, so waiting cannot starve it).
public func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = BlockingResult<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Where the task leaves its result; read only after the semaphore, which orders the accesses.
private final class BlockingResult<T>: @unchecked Sendable {
    var value: T?
}
