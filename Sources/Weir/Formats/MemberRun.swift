import Dispatch

/// What the parallel decoders of weir's own multi-member files share
/// (``GzipMemberScan``, ``Lz4FrameScan``, ``XzStreamScan``): once a scan has
/// found its members (start, compressed size, content size) without
/// decoding them, each is decoded whole on one of `threads` workers into a
/// pooled buffer of exactly its content size, and handed to the run in
/// order.
///
/// A member a scan found only from a header field (gzip's `Wr`) counts when
/// its decoder confirms it; one that ends elsewhere is decoded as its
/// format's own tool reads it, and the run stops after it (``Outcome``,
/// ``MemberGate``): ``queue(_:in:region:firstIndex:label:makeContext:decode:)``
/// returns where the serial decoder goes on. A damaged member cuts the run
/// before it, as before: the members before it are written, nothing after.
///
/// Bound: a member takes one of the run's slots before it is queued, its
/// output buffer goes back once written: at most `slots` members' output,
/// and `threads + 1` idle buffers of the largest member's size (pooled, so
/// that no member faults in a fresh mapping of its own). The mapping stays
/// alive while a job reads it (the job holds `data`).
/// Threads: `queue` runs on the run's thread, and waits there for the jobs
/// it queued; jobs on the pool's queue.
struct MemberRun {
    typealias Member = (start: Int, size: Int, content: Int)

    /// What decoding one member came to.
    enum Outcome {
        /// Decoded into the buffer: exactly its content size, ending exactly
        /// at its size.
        case confirmed
        /// It really ends `size` bytes in (its stated size was wrong), its
        /// content in `data`: the run goes on serially after it.
        case resized(DispatchData, size: Int)
        /// Not decoded here: the serial decoder reads it and what follows.
        case serial
        /// Damaged: the run is cut before it (``RunControl/fail(_:atPiece:)``).
        case failed(WeirError)
    }

    /// Decodes `member`, whose bytes start `rest` (which runs to the end of
    /// the region), into the buffer of its content size.
    typealias Decode<Context> = (Context, UnsafeRawBufferPointer, Member, UnsafeMutableRawPointer) -> Outcome

    let run: PipelineRun
    let threads: Int

    /// Queues `members` of `region` (in `data`) as output pieces from
    /// `firstIndex` on, and waits for them; returns the bytes of `region`
    /// they took and the next output index. Stops early after a member that
    /// ends elsewhere than stated, or when a slot cannot be had (the run
    /// stopped).
    func queue<Context: AnyObject>(_ members: [Member], in data: DispatchData, region: UnsafeRawBufferPointer,
                                   firstIndex: Int, label: String,
                                   makeContext: @escaping @Sendable () throws(WeirError) -> Context,
                                   decode: @escaping Decode<Context>) -> (bytes: Int, next: Int) {
        guard !members.isEmpty else { return (0, firstIndex) }
        let (control, run) = (self.run.control, self.run)
        let pool = WorkerPool<Context>(width: threads, label: label, makeContext: makeContext,
                                       onContextFailure: { control.fail($0) })
        let buffers = BufferPool(size: max(1, members.map(\.content).max() ?? 1), keep: threads + 1)
        let gate = MemberGate(run: run, firstIndex: firstIndex)
        let jobs = DispatchGroup()
        var queued = members.count
        for (number, member) in members.enumerated() {
            guard gate.stop == nil, let ticket = control.takeSlot() else {
                queued = number
                break
            }
            // In `data`, from the member's start to the region's end.
            nonisolated(unsafe) let rest = UnsafeRawBufferPointer(rebasing: region[member.start...])
            jobs.enter()
            pool.submit { context in
                defer { jobs.leave() }
                guard let context, !control.drops(piece: firstIndex + number), let output = buffers.take() else {
                    return gate.stop(at: number, offset: member.start, ticket: ticket)
                }
                let outcome = withExtendedLifetime(data) { decode(context, rest, member, output) }
                switch outcome {
                case .confirmed:
                    run.tally?.took(member.size)
                    run.tally?.frameDone()
                case .resized(_, let size):
                    run.tally?.took(size)
                    run.tally?.frameDone()
                case .serial, .failed: break
                }
                if case .confirmed = outcome {
                    return gate.confirmed(number, buffers.wrap(output, count: member.content), ticket: ticket)
                }
                buffers.recycle(output)
                switch outcome {
                case .confirmed:
                    break
                case .resized(let content, let size):
                    gate.confirmed(number, content, ticket: ticket, endingAt: member.start + size)
                case .serial:
                    gate.stop(at: number, offset: member.start, ticket: ticket)
                case .failed(let error):
                    // The members before it are still written (RunControl).
                    control.fail(error, atPiece: firstIndex + number)
                    gate.stop(at: number, offset: member.start, ticket: ticket)
                }
            }
        }
        // The serial decoder goes on where the members taken end.
        jobs.wait()
        if let stop = gate.stop { return (stop.offset, firstIndex + stop.member) }
        let end = queued < members.count ? members[queued].start : members[queued - 1].start + members[queued - 1].size
        return (end, firstIndex + queued)
    }
}
