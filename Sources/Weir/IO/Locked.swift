import Synchronization

/// A value guarded by a `Mutex`, in a class so that several queues and
/// threads share it: the little state they must all see (the first failure,
/// counters read at the end). Plain mutual exclusion; where a thread waits
/// for a change, ``ConditionLock`` is used instead.
/// `@unchecked`: the value, Sendable or not, is touched only inside the mutex.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Creates a lock guarding `value`.
    init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { value in try body(&value) }
    }

    /// A copy of the value.
    var current: Value { withLock { $0 } }
}
