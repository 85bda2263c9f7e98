import Dispatch
import WeirSystem

/// Holds the members ``WholeMemberDecoder`` decoded until every member before them
/// is handed to the run, so that a member whose stated size was wrong is
/// never followed by output made from a wrong boundary.
///
/// The members are numbered from 0 in the run. A decoded member goes to the
/// run once all before it did. The run stops at a member (``stop(at:offset:ticket:)``):
/// one not decoded here, or the one after a member that ended elsewhere
/// than stated (``confirmed(_:_:ticket:endingAt:)``); the members from there
/// on are dropped (their tickets released, their buffers back in the pool),
/// and the serial decoder takes over at the stop's offset.
///
/// Bound: a held member keeps its run ticket (a slot), so at most the run's
/// slots are held. Threads: any (the pool's workers); the state is behind
/// a lock, and the run is handed its pieces outside it.
final class MemberGate: Sendable {
    private struct State {
        /// The next member to hand to the run.
        var next = 0
        /// Decoded members waiting for one before them.
        var held: [Int: (data: DispatchData, ticket: RunTicket)] = [:]
        /// The first member not taken, and where the serial decoder starts.
        var stop: (member: Int, offset: Int)?

        /// Stops at `member` (unless already before it); returns the
        /// tickets of the held members it drops.
        mutating func stop(at member: Int, offset: Int) -> [RunTicket] {
            guard member < stop?.member ?? .max else { return [] }
            stop = (member, offset)
            return held.keys.filter { $0 >= member }.compactMap { held.removeValue(forKey: $0)?.ticket }
        }
    }

    private let state = Locked(State())
    private let run: PipelineRun
    /// The output index of member 0.
    let firstIndex: Int

    init(run: PipelineRun, firstIndex: Int) {
        self.run = run
        self.firstIndex = firstIndex
    }

    /// The first member not taken and where the serial decoder starts, once known.
    var stop: (member: Int, offset: Int)? { state.withLock { $0.stop } }

    /// Member `member` decoded to `data`: handed to the run with every held
    /// member after it that is now in order; dropped when the run stopped
    /// before it. With `endingAt`, the member ended there, not where its
    /// size said: the run stops after it.
    func confirmed(_ member: Int, _ data: DispatchData, ticket: RunTicket, endingAt end: Int? = nil) {
        let (ready, dropped): ([(Int, DispatchData, RunTicket)]?, [RunTicket]) = state.withLock { state in
            guard member < state.stop?.member ?? .max else { return (nil, []) }
            let dropped = end.map { state.stop(at: member + 1, offset: $0) } ?? []
            state.held[member] = (data, ticket)
            var ready: [(Int, DispatchData, RunTicket)] = []
            while let piece = state.held.removeValue(forKey: state.next) {
                ready.append((state.next, piece.data, piece.ticket))
                state.next += 1
            }
            return (ready, dropped)
        }
        for ticket in dropped { ticket.release() }
        guard let ready else { return ticket.release() }
        for (member, data, ticket) in ready {
            run.submit(firstIndex + member, data, ticket: ticket)
        }
    }

    /// The run stops at `member`, which was not taken: the serial decoder
    /// starts at `offset`; the held members from it on are dropped.
    func stop(at member: Int, offset: Int, ticket: RunTicket) {
        let dropped = state.withLock { $0.stop(at: member, offset: offset) }
        ticket.release()
        for ticket in dropped { ticket.release() }
    }
}
