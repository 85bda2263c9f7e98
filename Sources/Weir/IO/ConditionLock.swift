import Dispatch
import Glibc

/// A pthread mutex with a condition variable, for state that a thread waits
/// on (``ByteBudget``, the file batch's queue, gate and arrivals, the commit
/// queue); plain mutual exclusion is ``Locked`` (pthreads too). pthreads rather
/// than `NSCondition`, so the engine needs only FoundationEssentials.
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

    /// Sleeps until ``broadcast()`` or `deadline`, whichever comes first;
    /// call with the lock held (it is held again on return).
    func wait(until deadline: DispatchTime) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard deadline.uptimeNanoseconds > now else { return }
        let left = deadline.uptimeNanoseconds - now
        var wake = timespec()
        clock_gettime(CLOCK_REALTIME, &wake)  // the clock pthread_cond_timedwait reads by default
        let nanoseconds = UInt64(wake.tv_nsec) + left % 1_000_000_000
        wake.tv_sec += Int(left / 1_000_000_000 + nanoseconds / 1_000_000_000)
        wake.tv_nsec = Int(nanoseconds % 1_000_000_000)
        pthread_cond_timedwait(condition, mutex, &wake)
    }

    /// Wakes every thread in ``wait()``.
    func broadcast() { pthread_cond_broadcast(condition) }
}
