/// A value guarded by a pthread mutex (a ``ConditionLock``'s), shared by
/// several queues and threads: the little state they must all see (the first
/// failure, counters read at the end). Plain mutual exclusion; where a thread
/// waits for a change, the state is held by a ``ConditionLock`` directly.
///
/// pthreads, not `Synchronization.Mutex`: on Linux that is a futex Thread
/// Sanitizer does not see, so it reports every value it guards as racing
/// (docs/design.md, "Locks"), and the sanitizer run is one of weir's tests.
/// A struct around the lock (a class): copies share the one value.
package struct Locked<Value: Sendable>: Sendable {
    private let lock: ConditionLock<Value>

    /// Creates a lock guarding `value`.
    package init(_ value: Value) { lock = ConditionLock(value) }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock(body)
    }

    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}
