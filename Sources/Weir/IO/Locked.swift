import Glibc

/// A value guarded by a pthread mutex, in a class so that several queues and
/// threads share it: the little state they must all see (the first failure,
/// counters read at the end). Plain mutual exclusion; where a thread waits
/// for a change, ``ConditionLock`` is used instead.
///
/// pthreads, not `Synchronization.Mutex`: on Linux that is a futex Thread
/// Sanitizer does not see, so it reports every value it guards as racing
/// (docs/design.md, "Locks"), and the sanitizer run is one of weir's tests.
/// `@unchecked`: the value is touched only while `mutex` is held.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Creates a lock guarding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}
