/// The bytes some ``BufferPool``s have mapped, now and at most: what the
/// tests of a memory bound compare with the budget, counted apart from it.
package final class MappedTally: Sendable {
    private let state = Locked((now: 0, peak: 0))

    package init() {}

    /// Counts `bytes` more mapped (fewer when negative).
    func add(_ bytes: Int) {
        state.withLock { state in
            state.now += bytes
            state.peak = max(state.peak, state.now)
        }
    }

    /// The bytes mapped now.
    var now: Int { state.current.now }

    /// The most bytes that were mapped at once.
    package var peak: Int { state.current.peak }
}
