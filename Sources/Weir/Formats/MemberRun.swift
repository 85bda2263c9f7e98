import Dispatch

/// What the parallel decoders of weir's own multi-member files share
/// (``GzipMemberScan``, ``Lz4FrameScan``, ``XzStreamScan``): once a scan has
/// found its members (start, compressed size, content size) without
/// decoding them, each is decoded whole on one of `threads` workers into a
/// pooled buffer of exactly its content size, and handed to the run in
/// order, numbered as the run's other output pieces.
///
/// A member a scan found only from a header field (gzip's `Wr`) counts when
/// its decoder confirms it; one that ends elsewhere is decoded as its
/// format's own tool reads it, and the run stops after it (``Outcome``,
/// ``MemberGate``): ``queue(_:in:region:firstIndex:label:makeContext:decode:)``
/// returns where the serial decoder goes on. A damaged member cuts the run
/// before it, as before: the members before it are written, nothing after.
///
/// Bound: a member takes its output buffer from the run's ``FrameBuffers``
/// within its ``ByteBudget`` before it is queued (the reading thread waits
/// for room), and the buffer goes back to its pool once written. The
/// mapping stays alive while a job reads it (the job holds `data`).
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

    let session: DecodeSession
    let threads: Int

    /// Queues `members` of `region` (in `data`) as output pieces numbered
    /// from `sequence` on, and waits for them; returns the bytes of `region`
    /// they took, `sequence` the next output number. Stops early after a
    /// member that ends elsewhere than stated, or when the run stopped.
    func queue<Context: AnyObject>(_ members: [Member], in data: DispatchData, region: UnsafeRawBufferPointer,
                                   sequence: inout Int, label: String,
                                   makeContext: @escaping @Sendable () throws(WeirError) -> Context,
                                   decode: @escaping Decode<Context>) throws(WeirError) -> Int {
        guard !members.isEmpty else { return 0 }
        let (session, control, firstIndex) = (self.session, self.session.control, sequence)
        let pool = WorkerPool<Context>(width: threads, label: label, makeContext: makeContext,
                                       onContextFailure: { control.fail($0) })
        let gate = MemberGate(run: session.run, firstIndex: firstIndex)
        let jobs = DispatchGroup()
        var queued = members.count
        var failure: WeirError?
        for (number, member) in members.enumerated() {
            // The member's buffer within the budget: waits for room (the back-pressure).
            guard gate.stop == nil, control.failure == nil else {
                queued = number
                break
            }
            let output: UnsafeMutableRawPointer, buffers: BufferPool
            do throws(WeirError) {
                (output, buffers) = try session.takeBuffer(capacity: member.content, extra: 0)
            } catch {
                (queued, failure) = (number, error)
                break
            }
            let ticket = control.ticket()
            // In `data`, from the member's start to the region's end.
            nonisolated(unsafe) let rest = UnsafeRawBufferPointer(rebasing: region[member.start...])
            jobs.enter()
            pool.submit { context in
                defer { jobs.leave() }
                guard let context, !control.drops(piece: firstIndex + number) else {
                    buffers.recycle(output)
                    return gate.stop(at: number, offset: member.start, ticket: ticket)
                }
                let outcome = withExtendedLifetime(data) { decode(context, rest, member, output) }
                switch outcome {
                case .confirmed:
                    session.tally.took(member.size)
                    session.tally.frameDone()
                case .resized(_, let size):
                    session.tally.took(size)
                    session.tally.frameDone()
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
        if let failure { throw failure }
        let (end, next): (Int, Int)
        if let stop = gate.stop {
            (end, next) = (stop.offset, stop.member)
        } else if queued < members.count {
            (end, next) = (members[queued].start, queued)
        } else {
            (end, next) = (members[queued - 1].start + members[queued - 1].size, queued)
        }
        // Each member handed out took one output number, and counts as a frame.
        sequence = firstIndex + next
        session.frames.withLock { $0 += next }
        return end
    }
}
