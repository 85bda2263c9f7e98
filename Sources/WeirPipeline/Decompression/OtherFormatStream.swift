import Dispatch
import WeirFormats
import WeirSystem

/// Decodes what is not zstd: a stream that starts with a frame of another
/// format, or what follows a stream's zstd frames when it is not zstd:
/// frames of the other formats weir reads (gzip members, xz streams, .lzma,
/// lz4 frames, and zstd frames again after them), or, with pass-through,
/// any data, copied unchanged. zstd 1.5.4 tells each frame's format by its
/// magic number, whatever came before (`FIO_decompressFrames`); so does weir.
///
/// The ``FrameFeeder`` hands it the stream from where its scanner stopped
/// (``FrameScanner/tailStart``, 0 for a stream that starts with another
/// format), piece after piece; a ``MixedStreamDecoder`` decodes it in order
/// on the reading thread, and each block it makes is copied into a 1 MiB
/// buffer of the run's pool, taken within the budget (waiting for room, as a
/// streamed frame's are). A member's buffers are held until it ends, its
/// checks passed, then sent as the next output pieces: no byte of a damaged
/// member goes out (issue 59). A member larger than the parallel frame
/// limit streams from there on, as a zstd frame too large for it does.
///
/// weir's own multi-member gzip, lz4 and xz files, mapped whole (the tail
/// starts at offset 0 of the one region of the whole file), have their
/// leading members found without decoding them (``GzipMemberScan``,
/// ``Lz4FrameScan``, ``XzStreamScan``) and decoded in parallel, each whole
/// into a buffer of its own within the budget, on the run's workers
/// (``WholeMemberDecoder``); the serial
/// decoder goes on after them. Everything here runs on the reading thread.
final class OtherFormatStream {
    /// The serial decoder's blocks between decoding and written, each
    /// holding one of the run's slots: a few 1 MiB buffers, reused while
    /// still in the cache, as the one-thread engine before issue 54 had,
    /// rather than as many as the budget holds.
    static let blocksInFlight = 4

    private let session: DecodeSession
    private let decoder: MixedStreamDecoder
    private let buffers: BufferPool
    private let start: Int
    private let operation: WeirError.Operation
    /// The run's workers, for the members decoded in parallel.
    private let pool: WorkerPool<DecodingWorker>
    /// The member's buffers not yet sent, and the bytes in each: at most
    /// `heldLimit` of them, within the budget; no slot taken until sent.
    private var held: [(memory: UnsafeMutableRawPointer, count: Int)] = []
    private let heldLimit: Int

    /// A tail that starts at stream offset `start`.
    init(session: DecodeSession, pool: WorkerPool<DecodingWorker>, start: Int) {
        self.session = session
        self.pool = pool
        self.start = start
        // As zstd words it: testing (`-t`) is its own operation.
        operation = session.run.writer == nil ? .test : .decompress
        decoder = MixedStreamDecoder(options: session.options.decoding, path: session.path, operation: operation,
                                     wholeInput: start == 0 && session.wholeInput)
        decoder.position = start
        buffers = session.frameBuffers.pool(for: MixedStreamDecoder.blockSize)
        heldLimit = max(1, session.options.parallelFrameLimit / MixedStreamDecoder.blockSize)
    }

    deinit { drop() }

    /// Input bytes decoded (or copied) so far.
    var bytesIn: Int { decoder.position - start }

    /// Decodes the next piece of the tail; its output pieces are numbered
    /// from `sequence` on.
    func feed(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        do throws(WeirError) {
            try decode(data, sequence: &sequence)
        } catch {
            drop()
            throw error
        }
    }

    private func decode(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        var regions: [UnsafeRawBufferPointer] = []
        data.enumerateBytes { region, _, _ in regions.append(UnsafeRawBufferPointer(region)) }
        try withExtendedLifetime(data) { () throws(WeirError) in
            var skip = 0
            if start == 0, session.wholeInput, regions.count == 1, decoder.position == 0 {
                skip = try decodeMembers(data, region: regions[0], sequence: &sequence)
                decoder.position = skip
            }
            for region in regions {
                // In steps when someone follows, each told once decoded.
                let step = session.tally.isFollowed ? WorkTally.step : max(1, region.count)
                for at in stride(from: skip, to: region.count, by: step) {
                    let piece = UnsafeRawBufferPointer(rebasing: region[at ..< min(region.count, at + step)])
                    try decoder.feed(piece) { block, ends throws(WeirError) in
                        try hold(block, endsMember: ends, sequence: &sequence)
                    }
                    session.tally.took(piece.count)
                }
                skip = 0
            }
        }
    }

    /// Decodes the leading run of weir's own members of the whole file in
    /// parallel, when it has one; returns the bytes they take.
    private func decodeMembers(_ data: DispatchData, region: UnsafeRawBufferPointer,
                               sequence: inout Int) throws(WeirError) -> Int {
        let members = WholeMemberDecoder(session: session, pool: pool)
        var taken = try GzipMemberScan(members: members, operation: operation)
            .decode(data, region: region, sequence: &sequence)
        if taken == 0 {
            taken = try Lz4FrameScan(members: members, operation: operation)
                .decode(data, region: region, sequence: &sequence)
        }
        if taken == 0 {
            taken = try XzStreamScan(members: members, operation: operation)
                .decode(data, region: region, sequence: &sequence)
        }
        return taken
    }

    /// Ends the tail: it must not end inside a frame.
    func finish(sequence: inout Int) throws(WeirError) {
        do throws(WeirError) {
            try decoder.finish { block, ends throws(WeirError) in
                try hold(block, endsMember: ends, sequence: &sequence)
            }
            // Pass-through's copy ends with the input.
            try send(sequence: &sequence)
        } catch {
            drop()
            throw error
        }
        session.frames.withLock { $0 += decoder.frames }
        session.tally.frameDone(decoder.frames)
    }

    /// Copies `block` into the member's held buffers (taking one when the
    /// last is full); sends them when the member ends, or when they reach
    /// `heldLimit` (the member streams from there on).
    private func hold(_ block: UnsafeRawBufferPointer, endsMember: Bool, sequence: inout Int) throws(WeirError) {
        var taken = 0
        while taken < block.count {
            if held.isEmpty || held[held.count - 1].count == buffers.size {
                if held.count == heldLimit { try send(sequence: &sequence) }
                held.append((try session.takeBuffer(capacity: buffers.size, extra: 0).0, 0))
            }
            let last = held.count - 1
            let step = min(block.count - taken, buffers.size - held[last].count)
            UnsafeMutableRawBufferPointer(start: held[last].memory + held[last].count, count: step)
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: block[taken..<taken + step]))
            held[last].count += step
            taken += step
        }
        if endsMember { try send(sequence: &sequence) }
    }

    /// Sends the held buffers as the next output pieces, each taking a slot.
    private func send(sequence: inout Int) throws(WeirError) {
        let control = session.control
        try session.input.checkUnchanged()
        while !held.isEmpty {
            guard let ticket = control.takeSlot() else { throw control.failure ?? session.cancelled }
            let (memory, count) = held.removeFirst()
            // Blocks are often short (one per read piece): their buffers keep their pages.
            session.send(memory, count: count, from: buffers, number: sequence, ticket: ticket, keepsPages: true)
            sequence += 1
        }
    }

    /// Gives the held buffers back: their member failed, or the run did.
    private func drop() {
        for (memory, _) in held { buffers.recycle(memory) }
        held.removeAll()
    }
}
