import Dispatch

/// Decodes what follows a stream's zstd frames when it is not zstd: frames
/// of the other formats weir reads (gzip members, xz streams, .lzma, lz4
/// frames, and zstd frames again after them), or, with pass-through, any
/// data, copied unchanged. zstd 1.5.4 tells each frame's format by its magic
/// number, whatever came before (`FIO_decompressFrames`); so does weir.
///
/// The ``FrameFeeder`` hands it the stream from where its scanner stopped
/// (``FrameScanner/tailStart``), piece after piece; a ``MixedStreamDecoder``
/// decodes it in order on the reading thread, and each block it makes is
/// copied into a 1 MiB buffer of the run's pool, taken within the budget
/// (waiting for room, as a streamed frame's are), and sent as the next
/// output piece. Everything here runs on the reading thread.
final class OtherFormatTail {
    private let session: DecodeSession
    private let decoder: MixedStreamDecoder
    private let buffers: BufferPool
    private let start: Int

    /// A tail that starts at stream offset `start`.
    init(session: DecodeSession, start: Int) {
        self.session = session
        self.start = start
        decoder = MixedStreamDecoder(options: session.options, path: session.path, operation: .decompress)
        decoder.position = start
        buffers = session.frameBuffers.pool(for: MixedStreamDecoder.blockSize)
    }

    /// Input bytes decoded (or copied) so far.
    var bytesIn: Int { decoder.position - start }

    /// Decodes the next piece of the tail; its output pieces are numbered
    /// from `sequence` on.
    func feed(_ data: DispatchData, sequence: inout Int) throws(WeirError) {
        var regions: [UnsafeRawBufferPointer] = []
        data.enumerateBytes { region, _, _ in regions.append(UnsafeRawBufferPointer(region)) }
        try withExtendedLifetime(data) { () throws(WeirError) in
            for region in regions {
                // In steps when someone follows, each told once decoded.
                let step = session.tally.isFollowed ? WorkTally.step : max(1, region.count)
                for at in stride(from: 0, to: region.count, by: step) {
                    let piece = UnsafeRawBufferPointer(rebasing: region[at ..< min(region.count, at + step)])
                    try decoder.feed(piece) { block throws(WeirError) in try send(block, sequence: &sequence) }
                    session.tally.took(piece.count)
                }
            }
        }
    }

    /// Ends the tail: it must not end inside a frame.
    func finish(sequence: inout Int) throws(WeirError) {
        try decoder.finish { block throws(WeirError) in try send(block, sequence: &sequence) }
        session.frames.withLock { $0 += decoder.frames }
        session.tally.frameDone(decoder.frames)
    }

    private func send(_ block: UnsafeRawBufferPointer, sequence: inout Int) throws(WeirError) {
        let memory = try session.takeBuffer(capacity: buffers.size, extra: 0).0
        memory.copyMemory(from: block.baseAddress!, byteCount: block.count)
        try session.input.checkUnchanged()
        session.send(memory, count: block.count, from: buffers, number: sequence, ticket: session.control.ticket())
        sequence += 1
    }
}
