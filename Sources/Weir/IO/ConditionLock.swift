import Glibc

/// A pthread mutex with a condition variable: the lock under ``Locked`` and
/// the wait of ``ByteBudget``. pthreads rather than `NSLock`/`NSCondition`,
/// so the engine needs only FoundationEssentials.
/// `@unchecked`: pthread mutexes and condition variables exist to be shared between threads.
final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
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

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Sleeps until ``broadcast()``; call with the lock held (it is held again on return).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every thread in ``wait()``.
    func broadcast() { pthread_cond_broadcast(condition) }
}
