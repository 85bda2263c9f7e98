import DequeModule
import WeirSystem

/// Jobs made in order by one thread, their owner, and taken in order by
/// others, at most `ahead` made and not yet taken: the list of a large tree
/// is never held whole. When half of them are taken, `wake` tells the owner
/// to make more (it may be waiting on a lock of its own).
/// Threads: any; the jobs are a ``ConditionLock``'s state.
final class JobQueue<Job: Sendable>: Sendable {
    private let count: Int
    private let ahead: Int
    private let wake: @Sendable () -> Void
    private struct State {
        /// Jobs made and not yet taken, the first one numbered `next`.
        var waiting = Deque<Job>()
        var next = 0
        var closed = false
    }
    private let state = ConditionLock(State())

    /// A queue of `count` jobs, numbered from 0.
    init(count: Int, ahead: Int, wake: @escaping @Sendable () -> Void) {
        self.count = count
        self.ahead = ahead
        self.wake = wake
    }

    /// The number the next job made gets, when the queue wants one more:
    /// fewer than `ahead` wait, not all are made, not closed.
    var wanted: Int? {
        state.withLock { state in
            let made = state.next + state.waiting.count
            return !state.closed && made < count && state.waiting.count < ahead ? made : nil
        }
    }

    /// Adds the next job (the one ``wanted`` numbered).
    func put(_ job: Job) {
        state.withLock(broadcast: true) { $0.waiting.append(job) }
    }

    /// Waits for the next job and takes it with its number; nil once every
    /// job is taken, or the queue closed.
    func take() -> (index: Int, job: Job)? {
        let count = self.count
        let ahead = self.ahead
        let taken = state.withLock(when: { !$0.waiting.isEmpty || $0.next >= count || $0.closed }) {
            state -> (taken: (index: Int, job: Job), low: Bool)? in
            guard !state.waiting.isEmpty, !state.closed else { return nil }
            let taken = (state.next, state.waiting.removeFirst())
            state.next += 1
            return (taken, state.waiting.count == ahead / 2)
        }
        guard let taken else { return nil }
        if taken.low { wake() }
        return taken.taken
    }

    /// Takes no more jobs: every ``take()`` returns nil.
    func close() {
        state.withLock(broadcast: true) { state in
            state.closed = true
            state.waiting.removeAll()
        }
    }
}
