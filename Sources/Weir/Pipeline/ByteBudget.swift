/// A count of bytes in flight with an upper bound: the memory budget of
/// ``ParallelDecompressionPipeline``.
///
/// The reading thread acquires a frame's cost (its compressed bytes and the
/// buffer it decodes into) before handing it to a worker, and the cost comes
/// back piece by piece: what a worker did not use as soon as it finishes,
/// the rest when the writer has written the output. So however fast the
/// input and however slow the output, the bytes held stay under `limit`.
///
/// One acquisition larger than the whole budget is let through when nothing
/// else is in flight, so a single large piece never deadlocks the run.
///
/// Threads: `acquire` blocks, so only the pipeline's own reading thread
/// calls it (never a GCD worker); `release` and `cancel` are called from any
/// thread. `used`, `peak` and `cancelled` are guarded by `condition`.
final class ByteBudget: @unchecked Sendable {
    /// The most bytes in flight at once.
    let limit: Int
    private let condition = ConditionLock()
    private var used = 0
    private var highest = 0
    private var cancelled = false

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Waits until `count` more bytes fit, then takes them.
    ///
    /// - Returns: false when the budget was cancelled (the run failed).
    func acquire(_ count: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && used > 0 && used + count > limit {
            condition.wait()
        }
        if cancelled { return false }
        used += count
        highest = max(highest, used)
        return true
    }

    /// Gives back `count` bytes taken earlier.
    func release(_ count: Int) {
        guard count != 0 else { return }
        condition.lock()
        used -= count
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes the reading thread for good: every later `acquire` fails.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// The bytes in flight now.
    var inUse: Int {
        condition.lock()
        defer { condition.unlock() }
        return used
    }

    /// The most bytes that were ever in flight at once.
    var peak: Int {
        condition.lock()
        defer { condition.unlock() }
        return highest
    }
}
