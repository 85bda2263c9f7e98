import Dispatch
import WeirSystem

/// Values that threads deliver in any order and one thread, the owner, takes
/// in order, by number. The owner has more to do than wait (make jobs, report
/// committed ones): ``wake()`` ends its wait for those, and a wake-up that
/// comes between its look at them and its wait is not lost
/// (``wait(for:past:until:)`` compares a count of wake-ups).
/// Threads: any; the values and the count are a ``ConditionLock``'s state.
final class InOrderArrivals<Value: Sendable>: Sendable {
    private struct State {
        var arrived: [Int: Value] = [:]
        var wakeups = 0
    }
    private let state = ConditionLock(State())

    /// Delivers value number `index` and wakes the owner.
    func deliver(_ index: Int, _ value: Value) {
        state.withLock(broadcast: true) { $0.arrived[index] = value }
    }

    /// Wakes the owner for something else than a value.
    func wake() {
        state.withLock(broadcast: true) { $0.wakeups &+= 1 }
    }

    /// The wake-ups so far: read before looking at the other work, passed to
    /// ``wait(for:past:until:)``.
    var wakeCount: Int { state.withLock { $0.wakeups } }

    /// Takes value number `index` if it arrived.
    func take(_ index: Int) -> Value? {
        state.withLock { $0.arrived.removeValue(forKey: index) }
    }

    /// Takes every value that arrived, in order of their numbers.
    func takeAll() -> [(index: Int, value: Value)] {
        state.withLock { state in
            defer { state.arrived = [:] }
            return state.arrived.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// Waits until value number `index` arrives, a wake-up after the count
    /// `seen`, or `deadline`.
    func wait(for index: Int, past seen: Int, until deadline: DispatchTime?) {
        state.withLock(when: { $0.arrived[index] != nil || $0.wakeups != seen }, until: deadline) { _ in }
    }
}
