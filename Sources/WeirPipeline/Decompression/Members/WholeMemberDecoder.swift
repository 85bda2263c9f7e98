import Dispatch
import WeirSystem

/// Decodes the members of another format that a scan found in the whole
/// mapped file (``GzipMemberScan``, ``Lz4FrameScan``, ``XzStreamScan``), as
/// ``WholeFrameDecoder`` decodes zstd frames: each member (start, compressed
/// size, content size, found without decoding it) is decoded whole on the
/// pipeline's ``WorkerPool`` (a ``DecodingWorker``) into an output buffer of
/// the run's ``FrameBuffers``, and handed to the writer in order, numbered
/// as the run's other output pieces (the ``FrameFeeder``'s sequence).
///
/// A member a scan found only from a header field (gzip's `Wr`) counts when
/// its decoder confirms it; one that ends elsewhere is decoded as its
/// format's own tool reads it, and the run stops after it (``Outcome``,
/// ``MemberGate``): ``decode(_:in:region:sequence:_:)`` returns where the
/// serial decoder goes on. A damaged member cuts the run before it, as a
/// damaged zstd frame does: the members before it are written, nothing after.
///
/// Bound: a member takes its buffer within the run's ``ByteBudget`` before
/// it is queued (the reading thread waits for room: the back-pressure), and
/// the buffer goes back to its pool once written. The mapping stays alive
/// while a job reads it (the job holds `data`). Threads: `decode` runs on
/// the reading thread, and waits there for the members it queued; the
/// members are decoded on the workers.
struct WholeMemberDecoder {
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
    /// the region), with the worker's libraries into the buffer of its
    /// content size.
    typealias Decode = (DecodingWorker, UnsafeRawBufferPointer, Member, UnsafeMutableRawPointer) -> Outcome

    let session: DecodeSession
    let pool: WorkerPool<DecodingWorker>

    /// How errors name the input.
    var path: String { session.path }
    /// The largest member content decoded whole, in a buffer of its own.
    var frameLimit: Int { session.options.parallelFrameLimit }
    /// Whether members can be decoded side by side (more than one worker).
    var isParallel: Bool { pool.width > 1 }

    /// Queues `members` of `region` (in `data`) as output pieces numbered
    /// from `sequence` on, and waits for them; returns the bytes of `region`
    /// they took, `sequence` the next output number. Stops early after a
    /// member that ends elsewhere than stated, or when the run stopped.
    func decode(_ members: [Member], in data: DispatchData, region: UnsafeRawBufferPointer, sequence: inout Int,
                _ decode: @escaping Decode) throws(WeirError) -> Int {
        guard !members.isEmpty else { return 0 }
        let (session, control, firstIndex) = (self.session, self.session.control, sequence)
        let gate = MemberGate(run: session.run, firstIndex: firstIndex)
        let jobs = DispatchGroup()
        var queued = members.count
        var failure: WeirError?
        for (number, member) in members.enumerated() {
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
            pool.submit { worker in
                defer { jobs.leave() }
                guard let worker, !control.drops(piece: firstIndex + number) else {
                    buffers.recycle(output)
                    return gate.stop(at: number, offset: member.start, ticket: ticket)
                }
                let outcome = withExtendedLifetime(data) { decode(worker, rest, member, output) }
                Self.settle(outcome, of: member, number: firstIndex + number, output: output, from: buffers,
                            gate: gate, ticket: ticket, session: session)
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

    /// Acts on a member's outcome, on its worker: tells the progress, and
    /// hands the member to the gate, or stops or cuts the run there.
    private static func settle(_ outcome: Outcome, of member: Member, number: Int, output: UnsafeMutableRawPointer,
                               from buffers: BufferPool, gate: MemberGate, ticket: RunTicket,
                               session: DecodeSession) {
        let index = number - gate.firstIndex
        switch outcome {
        case .confirmed:
            session.tally.took(member.size)
            session.tally.frameDone()
            gate.confirmed(index, buffers.wrap(output, count: member.content), ticket: ticket)
        case .resized(let content, let size):
            buffers.recycle(output)
            session.tally.took(size)
            session.tally.frameDone()
            gate.confirmed(index, content, ticket: ticket, endingAt: member.start + size)
        case .serial:
            buffers.recycle(output)
            gate.stop(at: index, offset: member.start, ticket: ticket)
        case .failed(let error):
            buffers.recycle(output)
            // The members before it are still written (RunControl).
            session.control.fail(error, atPiece: number)
            gate.stop(at: index, offset: member.start, ticket: ticket)
        }
    }
}
