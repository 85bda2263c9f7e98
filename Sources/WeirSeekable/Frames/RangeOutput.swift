import Dispatch
import WeirPipeline
import WeirSystem

/// Where range extraction writes: pieces of content (copies of 1 MiB or
/// less) in order, through a ``PipelineRun`` whose input is empty, so the
/// bound, the stop on the first failure and the end are a pipeline's: a
/// piece takes one of ``piecesInFlight`` slots as a ``RunTicket``, released
/// when the writer is done with it.
///
/// Threads: ``write(_:)``, ``finish()`` and ``stop(_:)`` are called by the
/// one thread that extracts (they block: never a GCD worker); the writer's
/// queue completes pieces; the run's state is behind its locks.
final class RangeOutput {
    /// The most pieces written at once.
    static let piecesInFlight = 8
    private let control = RunControl(slots: RangeOutput.piecesInFlight)
    private let run: PipelineRun
    private let path: String
    /// The next piece's number; the extracting thread's.
    private var next = 0
    /// Whether the run has ended (``finish()`` ends it once).
    private var ended = false

    /// Opens the writer on `output`, named as it is in errors.
    init(_ output: Descriptor) {
        let path = output.path
        let control = self.control
        self.path = path
        run = PipelineRun(control: control, input: .feed(ChunkFeed(contents: .empty)), kind: .stream,
                          inputName: path, readSize: 1, mapFiles: false, sizesReadBuffers: false,
                          output: .descriptor(output),
                          outputName: path, observer: nil, wake: { control.slots.signal() })
        // The run's one entry for its maker, as a pipeline's thread holds one.
        control.activity.enter()
    }

    /// Queues a copy of `bytes`; waits while ``piecesInFlight`` pieces are
    /// in flight. Throws the run's failure (a write that failed).
    func write(_ bytes: UnsafeRawBufferPointer) throws(WeirError) {
        if let failure = control.failure { throw failure }
        guard !bytes.isEmpty else { return }
        guard let ticket = control.takeSlot() else {
            throw control.failure ?? WeirError.cancelled(path: path, operation: .decompress)
        }
        run.submit(next, DispatchData(bytes: bytes), ticket: ticket)
        next += 1
    }

    /// Waits for every piece and closes the writer; throws the first failure.
    func finish() throws(WeirError) {
        guard !ended else { return }
        ended = true
        control.activity.leave()
        control.activity.wait()
        _ = try run.end(bytesIn: 0)
    }

    /// Drops what is not written yet and closes the writer, after `error`
    /// (which the caller throws: a failure of the run's own is dropped).
    func stop(_ error: WeirError) {
        control.fail(error)
        _ = try? finish()
    }
}
