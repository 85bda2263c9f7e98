import DequeModule

/// Jobs made in order by one thread, their owner, and taken in order by
/// others, at most `ahead` made and not yet taken: the list of a large tree
/// is never held whole. When half of them are taken, `wake` tells the owner
/// to make more (it may be waiting on a lock of its own).
/// `@unchecked`: every field is touched only with `lock` held.
final class JobQueue<Job: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private let count: Int
    private let ahead: Int
    private let wake: @Sendable () -> Void
    /// Jobs made and not yet taken, the first one numbered `next`.
    private var waiting = Deque<Job>()
    private var next = 0
    private var closed = false

    /// A queue of `count` jobs, numbered from 0.
    init(count: Int, ahead: Int, wake: @escaping @Sendable () -> Void) {
        self.count = count
        self.ahead = ahead
        self.wake = wake
    }

    /// The number the next job made gets, when the queue wants one more:
    /// fewer than `ahead` wait, not all are made, not closed.
    var wanted: Int? {
        lock.lock()
        defer { lock.unlock() }
        let made = next + waiting.count
        return !closed && made < count && waiting.count < ahead ? made : nil
    }

    /// Adds the next job (the one ``wanted`` numbered).
    func put(_ job: Job) {
        lock.lock()
        defer { lock.unlock() }
        waiting.append(job)
        lock.broadcast()
    }

    /// Waits for the next job and takes it with its number; nil once every
    /// job is taken, or the queue closed.
    func take() -> (index: Int, job: Job)? {
        lock.lock()
        while waiting.isEmpty && next < count && !closed { lock.wait() }
        guard !waiting.isEmpty, !closed else {
            lock.unlock()
            return nil
        }
        let taken = (next, waiting.removeFirst())
        next += 1
        let low = waiting.count == ahead / 2
        lock.unlock()
        if low { wake() }
        return taken
    }

    /// Takes no more jobs: every ``take()`` returns nil.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        closed = true
        waiting.removeAll()
        lock.broadcast()
    }
}
