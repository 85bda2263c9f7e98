import WeirSystem

/// Where jobs that share the machine and jobs that need it alone meet: any
/// number of shared holders at once, or one exclusive holder. A job waiting
/// to go alone keeps new shared ones out, or a stream of small files would
/// keep it waiting for ever.
/// Threads: any; the holders are a ``ConditionLock``'s state.
final class ExclusiveGate: Sendable {
    private struct Holders {
        /// Shared holders inside.
        var shared = 0
        /// An exclusive holder is inside, or waiting for the shared ones to leave.
        var exclusive = false
    }
    private let holders = ConditionLock(Holders())

    /// Waits until the caller may go in, alone or beside other shared holders.
    func enter(alone: Bool) {
        holders.withLock(when: { !$0.exclusive }) { holders in
            if alone { holders.exclusive = true } else { holders.shared += 1 }
        }
        if alone { holders.withLock(when: { $0.shared == 0 }) { _ in } }
    }

    /// Leaves, as entered.
    func leave(alone: Bool) {
        holders.withLock(broadcast: true) { holders in
            if alone { holders.exclusive = false } else { holders.shared -= 1 }
        }
    }
}
