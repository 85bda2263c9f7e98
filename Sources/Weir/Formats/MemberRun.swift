import Dispatch

/// What the parallel decoders of weir's own multi-member files share
/// (``GzipMemberScan``, ``Lz4FrameScan``, ``XzStreamScan``): once a scan has
/// found its members (start, compressed size, content size) without
/// decoding them, each is decoded whole on one of `threads` workers into a
/// pooled buffer of exactly its content size, and handed to the run in
/// order.
///
/// Bound: a member takes one of the run's slots before it is queued, its
/// output buffer goes back once written: at most `slots` members' output,
/// and `threads + 1` idle buffers of the largest member's size (pooled, so
/// that no member faults in a fresh mapping of its own). The mapping stays
/// alive while a job reads it (the job holds `data`).
/// Threads: `queue` runs on the run's thread; jobs on the pool's queue.
struct MemberRun {
    typealias Member = (start: Int, size: Int, content: Int)
    /// Decodes `member`, whose bytes start at the pointer, into the buffer
    /// (its content size, exactly); nil when it did, else the run's error.
    typealias Decode<Context> = (Context, UnsafeRawPointer, Member, UnsafeMutableRawPointer) -> WeirError?

    let run: PipelineRun
    let threads: Int

    /// Queues `members` of `region` (in `data`) as output pieces from
    /// `firstIndex` on, until a slot cannot be had (the run stopped);
    /// returns the bytes of `region` queued and the next output index.
    func queue<Context: AnyObject>(_ members: [Member], in data: DispatchData, region: UnsafeRawBufferPointer,
                                   firstIndex: Int, label: String,
                                   makeContext: @escaping @Sendable () throws(WeirError) -> Context,
                                   decode: @escaping Decode<Context>) -> (bytes: Int, next: Int) {
        guard let last = members.last else { return (0, firstIndex) }
        let (control, run) = (self.run.control, self.run)
        let pool = WorkerPool<Context>(width: threads, label: label, makeContext: makeContext,
                                       onContextFailure: { control.fail($0) })
        let buffers = BufferPool(size: max(1, members.map(\.content).max() ?? 1), keep: threads + 1)
        var index = firstIndex
        for member in members {
            guard let ticket = control.takeSlot() else { return (member.start, index) }
            let number = index
            index += 1
            nonisolated(unsafe) let input = UnsafeRawPointer(region.baseAddress! + member.start)  // in `data`
            pool.submit { context in
                guard let context, !control.drops(piece: number), let output = buffers.take() else {
                    return ticket.release()
                }
                if let error = withExtendedLifetime(data, { decode(context, input, member, output) }) {
                    buffers.recycle(output)
                    // The members before it are still written (RunControl).
                    control.fail(error, atPiece: number)
                    return ticket.release()
                }
                run.submit(number, buffers.wrap(output, count: member.content), ticket: ticket)
            }
        }
        return (last.start + last.size, index)
    }
}
