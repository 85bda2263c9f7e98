import WeirSystem

/// Lets one thread (a signal handler's queue) stop the run another thread is
/// waiting on.
///
/// A run attaches its stop action while it runs; ``cancel()`` calls it, or,
/// when no run is attached, marks the next one cancelled before it starts
/// writing anything that lasts.
public final class Cancellation: Sendable {
    private struct State {
        var cancelled = false
        var next = 0
        var actions: [Int: @Sendable () -> Void] = [:]
    }
    private let state = Locked(State())

    /// Creates a handle that is not cancelled.
    public init() {}

    /// Stops the attached runs (several when files run side by side), and
    /// every later one.
    public func cancel() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            state.cancelled = true
            return Array(state.actions.values)
        }
        for action in actions { action() }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Attaches a run's stop action until ``detach(_:)`` with the returned
    /// key; calls it at once when cancelled already.
    @discardableResult
    package func attach(_ action: @escaping @Sendable () -> Void) -> Int {
        let (key, cancelled) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            state.actions[state.next] = action
            return (state.next, state.cancelled)
        }
        if cancelled { action() }
        return key
    }

    package func detach(_ key: Int) {
        _ = state.withLock { $0.actions.removeValue(forKey: key) }
    }
}
