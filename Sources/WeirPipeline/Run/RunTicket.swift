import Dispatch
import Synchronization

/// One piece's claim on its run, from the moment it is taken until the
/// piece is written or dropped: an entry in ``RunControl/activity`` and,
/// when the run bounds its pieces by slots, one of ``RunControl/slots``.
///
/// ``release()`` gives both back, exactly once, and is called by whoever
/// finishes the piece: the writer's completion (``PipelineRun`` holds the
/// ticket of every piece handed to the writer) or the path that drops the
/// piece after a failure. No other code signals a slot for a piece or
/// leaves the activity for it.
package final class RunTicket: Sendable {
    private let control: RunControl
    private let holdsSlot: Bool
    private let released = Atomic<Bool>(false)

    /// Enters the activity; the slot, if `holdsSlot`, was taken by the caller.
    fileprivate init(control: RunControl, holdsSlot: Bool) {
        self.control = control
        self.holdsSlot = holdsSlot
        control.activity.enter()
    }

    /// Frees the slot (if held), then leaves the activity.
    func release() {
        precondition(!released.exchange(true, ordering: .acquiringAndReleasing), "RunTicket released twice")
        if holdsSlot { control.slots.signal() }
        control.activity.leave()
    }
}

extension RunControl {
    /// Waits for a free slot and returns it as a ticket; nil once the run has
    /// failed (the slot, or the wake-up, goes back at once). Only the
    /// pipeline's dedicated threads call it: it blocks.
    package func takeSlot() -> RunTicket? {
        slots.wait()
        if isFailed {
            slots.signal()
            return nil
        }
        return RunTicket(control: self, holdsSlot: true)
    }

    /// A ticket that holds no slot: for a piece bounded otherwise (the
    /// decompression's byte budget, the seek table after the last frame).
    func ticket() -> RunTicket {
        RunTicket(control: self, holdsSlot: false)
    }
}
