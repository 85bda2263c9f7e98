/// Where jobs that share the machine and jobs that need it alone meet: any
/// number of shared holders at once, or one exclusive holder. A job waiting
/// to go alone keeps new shared ones out, or a stream of small files would
/// keep it waiting for ever.
/// `@unchecked`: the counts are touched only with `lock` held.
final class ExclusiveGate: @unchecked Sendable {
    private let lock = ConditionLock()
    /// Shared holders inside.
    private var shared = 0
    /// An exclusive holder is inside, or waiting for the shared ones to leave.
    private var exclusive = false

    /// Waits until the caller may go in, alone or beside other shared holders.
    func enter(alone: Bool) {
        lock.lock()
        defer { lock.unlock() }
        while exclusive { lock.wait() }
        if alone {
            exclusive = true
            while shared > 0 { lock.wait() }
        } else {
            shared += 1
        }
    }

    /// Leaves, as entered.
    func leave(alone: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if alone { exclusive = false } else { shared -= 1 }
        lock.broadcast()
    }
}
