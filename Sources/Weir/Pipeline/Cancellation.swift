/// Lets one thread (a signal handler's queue) stop the run another thread is
/// waiting on.
///
/// A run attaches its stop action while it runs; ``cancel()`` calls it, or,
/// when no run is attached, marks the next one cancelled before it starts
/// writing anything that lasts.
public final class Cancellation: Sendable {
    private let state = Locked<(cancelled: Bool, action: (@Sendable () -> Void)?)>((false, nil))

    /// Creates a handle that is not cancelled.
    public init() {}

    /// Stops the attached run, and every later one.
    public func cancel() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.action
        }
        action?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    func attach(_ action: @escaping @Sendable () -> Void) {
        let cancelled = state.withLock { state -> Bool in
            state.action = action
            return state.cancelled
        }
        if cancelled { action() }
    }

    func detach() {
        state.withLock { $0.action = nil }
    }
}
