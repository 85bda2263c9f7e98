/// A count of bytes held with an upper bound: the memory budget of
/// ``DecompressionPipeline``.
///
/// What it counts is memory, not work: the compressed bytes of every frame
/// handed to a worker until it is decoded, every output buffer from the
/// moment it is mapped until it is unmapped — in use, waiting for the writer,
/// on its way back from libdispatch's asynchronous deallocator, or idle in
/// its pool (``FrameBuffers``) — and the window of a streamed frame's
/// decoder. So buffers kept for reuse and buffers freed late can never push
/// the process past `limit`, however fast the input and slow the output.
///
/// One acquisition larger than the whole budget is let through when nothing
/// else is held, so a single large piece never deadlocks the run.
///
/// Threads: `acquire` blocks, so only the pipeline's own reading thread
/// calls it (never a GCD worker); `release`, `notify` and `cancel` are
/// called from any thread. `used`, `peak` and `cancelled` are guarded by
/// `condition`.
/// `@unchecked`: its counters are touched only under `condition`, a pthread condition variable.
final class ByteBudget: @unchecked Sendable {
    /// The most bytes held at once.
    let limit: Int
    private let condition = ConditionLock()
    private var used = 0
    private var highest = 0
    private var cancelled = false

    /// How a wait in ``acquire(_:unless:)`` ended.
    enum Outcome {
        /// The bytes were taken.
        case taken
        /// `unless` said something else can be done first; nothing was taken.
        case interrupted
        /// The budget was cancelled (the run failed); nothing was taken.
        case cancelled
    }

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Waits until `count` more bytes fit and takes them, or until `unless`
    /// (asked with the budget's lock held, before each wait and after each
    /// ``release(_:)`` or ``notify()``) returns true: memory already held
    /// may serve instead (an idle buffer), or be given back first.
    func acquire(_ count: Int, unless interrupt: () -> Bool) -> Outcome {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && count > 0 && used > 0 && used + count > limit {
            if interrupt() { return .interrupted }
            condition.wait()
        }
        if cancelled { return .cancelled }
        used += count
        highest = max(highest, used)
        return .taken
    }

    /// Gives back `count` bytes taken earlier.
    func release(_ count: Int) {
        guard count != 0 else { return }
        condition.lock()
        used -= count
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes a waiting ``acquire(_:unless:)`` to ask its `unless` again
    /// (a buffer became idle: its bytes stay taken).
    func notify() {
        condition.lock()
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

    /// The bytes held now.
    var inUse: Int {
        condition.lock()
        defer { condition.unlock() }
        return used
    }

    /// The most bytes that were ever held at once.
    var peak: Int {
        condition.lock()
        defer { condition.unlock() }
        return highest
    }
}
