import Dispatch

/// Values that threads deliver in any order and one thread, the owner, takes
/// in order, by number. The owner has more to do than wait (make jobs, report
/// committed ones): ``wake()`` ends its wait for those, and a wake-up that
/// comes between its look at them and its wait is not lost
/// (``wait(for:past:until:)`` compares a count of wake-ups).
/// `@unchecked`: every field is touched only with `lock` held.
final class InOrderArrivals<Value: Sendable>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var arrived: [Int: Value] = [:]
    private var wakeups = 0

    /// Delivers value number `index` and wakes the owner.
    func deliver(_ index: Int, _ value: Value) {
        lock.lock()
        defer { lock.unlock() }
        arrived[index] = value
        lock.broadcast()
    }

    /// Wakes the owner for something else than a value.
    func wake() {
        lock.lock()
        defer { lock.unlock() }
        wakeups &+= 1
        lock.broadcast()
    }

    /// The wake-ups so far: read before looking at the other work, passed to
    /// ``wait(for:past:until:)``.
    var wakeCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return wakeups
    }

    /// Takes value number `index` if it arrived.
    func take(_ index: Int) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return arrived.removeValue(forKey: index)
    }

    /// Waits until value number `index` arrives, a wake-up after the count
    /// `seen`, or `deadline`.
    func wait(for index: Int, past seen: Int, until deadline: DispatchTime?) {
        lock.lock()
        defer { lock.unlock() }
        guard arrived[index] == nil, wakeups == seen else { return }
        if let deadline { lock.wait(until: deadline) } else { lock.wait() }
    }
}
