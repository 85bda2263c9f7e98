import WeirSystem

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
/// called from any thread. The counts are a ``ConditionLock``'s state.
final class ByteBudget: Sendable {
    private struct Counts {
        /// The most bytes held at once; it only grows (``raise(to:)``).
        var limit: Int
        var used = 0
        var highest = 0
        var cancelled = false

        /// Whether `count` more bytes do not fit now (one piece is let
        /// through alone, however large).
        func short(of count: Int) -> Bool {
            count > 0 && used > 0 && used + count > limit
        }
    }
    private let counts: ConditionLock<Counts>

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
        counts = ConditionLock(Counts(limit: max(1, limit)))
    }

    /// The most bytes held at once.
    var limit: Int { counts.withLock { $0.limit } }

    /// Raises the limit to `newLimit` if that is higher (a run that finds
    /// larger frames than the default budget holds: ``DecompressionOptions/budget(forFrame:)``).
    func raise(to newLimit: Int) {
        counts.withLock(broadcast: true) { $0.limit = max($0.limit, newLimit) }
    }

    /// Waits until `count` more bytes fit and takes them, or until `unless`
    /// (asked with the budget's lock held, before each wait and after each
    /// ``release(_:)`` or ``notify()``) returns true: memory already held
    /// may serve instead (an idle buffer), or be given back first.
    func acquire(_ count: Int, unless interrupt: () -> Bool) -> Outcome {
        counts.withLock(when: { $0.cancelled || !$0.short(of: count) || interrupt() }) { counts in
            if counts.cancelled { return .cancelled }
            if counts.short(of: count) { return .interrupted }
            counts.used += count
            counts.highest = max(counts.highest, counts.used)
            return .taken
        }
    }

    /// Gives back `count` bytes taken earlier.
    func release(_ count: Int) {
        guard count != 0 else { return }
        counts.withLock(broadcast: true) { $0.used -= count }
    }

    /// Wakes a waiting ``acquire(_:unless:)`` to ask its `unless` again
    /// (a buffer became idle: its bytes stay taken).
    func notify() {
        counts.withLock(broadcast: true) { _ in }
    }

    /// Wakes the reading thread for good: every later `acquire` fails.
    func cancel() {
        counts.withLock(broadcast: true) { $0.cancelled = true }
    }

    /// The bytes held now.
    var inUse: Int { counts.withLock { $0.used } }

    /// The most bytes that were ever held at once.
    var peak: Int { counts.withLock { $0.highest } }
}
