import Dispatch
import Glibc

/// A state guarded by a pthread mutex, with a condition variable for the
/// threads that wait for it to change: ``ByteBudget``'s count, the file
/// batch's ``JobQueue``, ``ExclusiveGate`` and ``InOrderArrivals``, the
/// ``CommitQueue``'s committing thread, a ``PendingRead``. Plain mutual
/// exclusion is ``Locked``, which wraps one of these and never waits.
///
/// The one place weir waits on a lock: a waiter names the state it waits for
/// (`when`, asked with the lock held, before each sleep), and whoever changes
/// the state says so (`broadcast: true`), so no wake-up is lost between a look
/// and a sleep. pthreads rather than `NSCondition` (the engine needs only
/// FoundationEssentials) or `Synchronization.Mutex` (a futex Thread Sanitizer
/// does not see: docs/design.md, "Locks").
///
/// Sendable by hand: a pthread mutex; `state` only touched with it held.
package final class ConditionLock<State: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    package init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state; with `broadcast`, then
    /// wakes every waiter to look at it again.
    @discardableResult
    package func withLock<Result>(broadcast: Bool = false, _ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if broadcast { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Sleeps until `ready` (asked with the lock held, before each sleep)
    /// returns true or `deadline` passes, then runs `body` with exclusive
    /// access; `body` looks at the state again to know which came first.
    /// With `broadcast`, wakes every waiter after `body`.
    @discardableResult
    package func withLock<Result>(
        when ready: (State) -> Bool, until deadline: DispatchTime? = nil, broadcast: Bool = false,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if broadcast { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        while !ready(state) {
            if let deadline {
                guard sleep(until: deadline) else { break }
            } else {
                pthread_cond_wait(condition, mutex)
            }
        }
        return try body(&state)
    }

    /// Sleeps until a broadcast or `deadline`, with the lock held (held
    /// again on return); false when `deadline` had already passed.
    private func sleep(until deadline: DispatchTime) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        guard deadline.uptimeNanoseconds > now else { return false }
        let left = deadline.uptimeNanoseconds - now
        var wake = timespec()
        clock_gettime(CLOCK_REALTIME, &wake)  // the clock pthread_cond_timedwait reads by default
        let nanoseconds = UInt64(wake.tv_nsec) + left % 1_000_000_000
        wake.tv_sec += Int(left / 1_000_000_000 + nanoseconds / 1_000_000_000)
        wake.tv_nsec = Int(nanoseconds % 1_000_000_000)
        pthread_cond_timedwait(condition, mutex, &wake)
        return true
    }
}
