import Dispatch
import WeirSystem

/// The run every pipeline shares: its reader and its writer, the counters of
/// what went out, the clock, the stop on the first failure, and the end that
/// closes both channels and reports.
///
/// A pipeline makes one, plugs in what its pieces do when they are out
/// (`onWritten`: record a seek-table entry, count a frame) and what wakes
/// its own thread after a failure (`wake`), starts its loop with
/// ``RunControl/startThread(name:_:)``, hands each piece over with its
/// ``RunTicket``, waits for ``RunControl/activity``, then calls
/// ``end(bytesIn:)``. A piece's ticket is released here, when the writer
/// is done with the piece (written, or dropped after a failure).
///
/// Threads: the writer's completions run on its queue (or the stream
/// consumer's task) and touch only `written` and `tickets`, behind locks;
/// everything else is fixed at init.
package final class PipelineRun: Sendable {
    let control: RunControl
    let reader: ChunkReader
    /// nil when the output is dropped (testing an input).
    let writer: (any PieceSink)?
    private let cleanup: DispatchGroup
    private let started = DispatchTime.now()
    private let written = Locked(0)
    /// The tickets of the pieces the writer holds, by piece number.
    private let tickets = Locked<[Int: RunTicket]>([:])
    private let onWritten: @Sendable (_ index: Int, _ size: Int) -> Void

    /// Opens the reader and the writer and arms the stop on failure.
    ///
    /// - Parameters:
    ///   - readSize: the bytes of one read.
    ///   - mapFiles: map a regular file rather than read it.
    ///   - sizesReadBuffers: size libdispatch's read buffers to the reads
    ///     (``DispatchIOTuning``; the pipeline's option).
    ///   - sparse: leave holes for blocks of zeros in a regular output file.
    ///   - countsReads: tell `observer` of the bytes read; false when the
    ///     pipeline tells it of the input its work took instead.
    ///   - onWritten: called with each piece's number and size once it is
    ///     out, or -1 once it was dropped; before its ticket is released.
    ///   - wake: after a failure, unblocks the pipeline's own thread.
    ///   - onWriterBusy: told when the output channel starts and stops
    ///     having writes in flight (a descriptor's writer only; `--adapt`).
    package init(control: RunControl, input: PipelineInput, kind: InputKind, inputName: String, readSize: Int,
                 mapFiles: Bool, sizesReadBuffers: Bool, output: PipelineOutput?, outputName: String,
                 sparse: Bool = false, observer: ProgressObserver?, countsReads: Bool = true,
                 onWritten: @escaping @Sendable (_ index: Int, _ size: Int) -> Void = { _, _ in },
                 wake: @escaping @Sendable () -> Void, onWriterBusy: (@Sendable (Bool) -> Void)? = nil) {
        self.control = control
        self.onWritten = onWritten
        let cleanup = DispatchGroup()
        self.cleanup = cleanup
        switch input {
        case .descriptor(let file):
            reader = ChunkReader(
                input: file, kind: kind, chunkSize: readSize, mapFiles: mapFiles, live: observer != nil,
                sizesReadBuffers: sizesReadBuffers, cleanup: cleanup,
                onBytes: { count in
                    observer?.bytesReceived(count)
                    if countsReads { observer?.bytesRead(count) }
                })
        case .feed(let feed):
            reader = ChunkReader(feed: feed, path: inputName, chunkSize: readSize)
        }
        let written = self.written
        let tickets = self.tickets
        let onFinished: @Sendable (Int, Int) -> Void = { index, size in
            if size >= 0 {
                written.withLock { $0 += size }
                observer?.bytesWritten(size)
            }
            onWritten(index, size)
            tickets.withLock { $0.removeValue(forKey: index) }?.release()
        }
        switch output {
        case .descriptor(let file, let writeBack):
            writer = OrderedWriter(output: file, sparse: sparse, writeBack: writeBack, cleanup: cleanup,
                                   onFinished: onFinished, onError: { control.fail($0) }, onBusy: onWriterBusy)
        case .stream(let sink):
            sink.attach(onFinished: onFinished)
            writer = sink
        case nil:
            writer = nil
        }
        control.stopOnFailure(reader: reader, writer: writer, wake: wake)
    }

    /// Hands output piece `index` to the writer with its ticket, released
    /// once the piece is written or dropped. With no writer (testing an
    /// input) the piece counts as written at once (``discard(_:count:ticket:)``).
    package func submit(_ index: Int, _ data: DispatchData, ticket: RunTicket) {
        if let writer {
            tickets.withLock { $0[index] = ticket }
            writer.submit(index, data)
        } else {
            discard(index, count: data.count, ticket: ticket)
        }
    }

    /// Counts output piece `index` of `count` bytes as written without
    /// writing it (testing an input), so its maker can reuse its memory now,
    /// and releases its ticket.
    func discard(_ index: Int, count: Int, ticket: RunTicket) {
        written.withLock { $0 += count }
        onWritten(index, count)
        ticket.release()
    }

    /// Ends the run once ``RunControl/activity`` has emptied: closes both
    /// channels, throws the first failure, or returns the statistics every
    /// run reports (bytes in, bytes out, seconds); the pipeline adds its own.
    package func end(bytesIn: Int) throws(WeirError) -> Statistics {
        try control.closeChannels(reader: reader, writer: writer, cleanup: cleanup)
        var statistics = Statistics()
        statistics.bytesIn = bytesIn
        statistics.bytesOut = written.current
        statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return statistics
    }
}
