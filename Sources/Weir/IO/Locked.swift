/// A value guarded by a lock, for the little state that several queues and
/// threads must see (the first failure, counters read at the end).
public final class Locked<Value>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value

    /// Creates a lock guarding `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    public var current: Value { withLock { $0 } }
}
