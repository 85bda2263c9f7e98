/// A value guarded by a pthread mutex (a ``ConditionLock``'s), in a class
/// so that several queues and threads share it: the little state they must
/// all see (the first failure, counters read at the end). Plain mutual
/// exclusion; where a thread waits for a change, ``ConditionLock`` is used
/// with its condition.
///
/// pthreads, not `Synchronization.Mutex`: on Linux that is a futex Thread
/// Sanitizer does not see, so it reports every value it guards as racing
/// (docs/design.md, "Locks"), and the sanitizer run is one of weir's tests.
/// `@unchecked`: the value is touched only while `lock` is held.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value

    /// Creates a lock guarding `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}
