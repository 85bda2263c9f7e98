import Dispatch

/// The one loop around `ZSTD_decompressStream`, for every path that streams
/// a frame: the pipeline's frames decoded region by region or streamed, the
/// seekable reader's reads up to an end, the measure of frames without a
/// size, a range read from a pipe. The bytes come from a stream (given in
/// pieces: ``decode(_:into:_:)``) or from a frame at an offset of a file
/// (``decodeFrame(in:at:compressedSize:buffer:into:onRead:_:)``); the
/// content goes to a ``DecoderOutput`` and, as it comes, to a body that may
/// stop the decoding (a read that ends inside the frame).
///
/// It holds the checks once, with one message each: that the decoder makes
/// progress, that no bytes follow the end of a frame (unless a stream of
/// frames goes on), that a frame ends where its bytes end
/// (``checkEnded()``), and that the input does not end inside a frame
/// (``finish(inputEndsAt:)``, the one truncation).
///
/// A value owned by one thread at a time, with its context.
struct FrameDecoder {
    /// How much of a frame read from a file is read at once: 1 MiB.
    static let pieceSize = 1 << 20

    let context: DecompressionContext
    /// How errors name the input.
    let path: String
    /// Whether the bytes are a stream of frames (a pipe read for a range):
    /// a frame that ends is followed by the next, not by the end.
    let followsFrames: Bool
    /// 0 once the frame has ended, otherwise libzstd's hint of the input it
    /// still needs.
    private(set) var hint = 1
    /// Content bytes decoded.
    private(set) var produced = 0

    init(context: DecompressionContext, path: String, followsFrames: Bool = false) {
        self.context = context
        self.path = path
        self.followsFrames = followsFrames
    }

    /// Decodes `source`, the next bytes, into `output`, handing `body` each
    /// stretch of content as it is decoded, until every byte is in and its
    /// content out, or `body` returns false.
    ///
    /// - Returns: false when `body` stopped it.
    /// - Throws: `.corrupt` when the decoder makes no progress or bytes
    ///   follow the end of the frame; what libzstd, `output` or `body` throws.
    @discardableResult
    mutating func decode(_ source: UnsafeRawBufferPointer, into output: inout some DecoderOutput,
                         _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Bool = { _ in true })
        throws(WeirError) -> Bool {
        var used = 0
        // Someone follows the progress: the decoder is given a step at a
        // time, each told once taken.
        let consumed = context.consumed
        let step = consumed == nil ? Int.max : WorkTally.step
        while true {
            if hint == 0, !followsFrames, used < source.count {
                throw WeirError.corrupt(path: path, operation: .decompress, "bytes after the end of the frame")
            }
            let (buffer, start) = try output.buffer()
            let before = used
            var filled = start
            let given = source.count - used > step ? UnsafeRawBufferPointer(rebasing: source[..<(used + step)]) : source
            hint = try context.decompressStream(given, consumed: &used, into: buffer, filled: &filled)
            consumed?(used - before)
            produced += filled - start
            try output.decoded(upTo: filled)
            if filled > start {
                let piece = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[start ..< filled])
                if try !body(piece) { return false }
            }
            if hint != 0, used == before, filled == start, used < source.count {
                throw WeirError.corrupt(path: path, operation: .decompress, "the decoder makes no progress")
            }
            // A full buffer may leave content in the decoder: ask again.
            let full = filled == buffer.count && filled > start
            if used == source.count && (!full || (hint == 0 && !followsFrames)) { return true }
        }
    }

    /// As ``decode(_:into:_:)-(UnsafeRawBufferPointer,_,_)``, for bytes in
    /// several regions (read pieces, not joined).
    @discardableResult
    mutating func decode(_ source: DispatchData, into output: inout some DecoderOutput,
                         _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Bool = { _ in true })
        throws(WeirError) -> Bool {
        var outcome: Result<Bool, WeirError> = .success(true)
        source.enumerateBytes { region, _, stop in
            do throws(WeirError) {
                if try !decode(UnsafeRawBufferPointer(region), into: &output, body) {
                    outcome = .success(false)
                    stop = true
                }
            } catch {
                outcome = .failure(error)
                stop = true
            }
        }
        return try outcome.get()
    }

    /// Decodes the frame of `compressedSize` bytes at `offset` of `file`,
    /// read into `buffer` a piece at a time and shown to `onRead` before it
    /// is decoded; as ``decode(_:into:_:)-(UnsafeRawBufferPointer,_,_)``
    /// otherwise, and the frame must end with its bytes.
    ///
    /// - Returns: false when `body` stopped it.
    /// - Throws: the truncation of ``finish(inputEndsAt:)`` when the file
    ///   ends first; as ``checkEnded()``; what reading, decoding, `onRead`
    ///   or `body` throws.
    @discardableResult
    mutating func decodeFrame(in file: Descriptor, at offset: Int, compressedSize: Int,
                              buffer: UnsafeMutableRawBufferPointer, into output: inout some DecoderOutput,
                              onRead: (UnsafeRawBufferPointer) throws(WeirError) -> Void = { _ in },
                              _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Bool = { _ in true })
        throws(WeirError) -> Bool {
        var read = 0
        while read < compressedSize {
            let count = min(buffer.count, compressedSize - read)
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count])
            let got = try file.read(into: piece, at: offset + read, operation: .read)
            read += got
            guard got == count else { throw Self.truncation(path: path, at: offset + read) }
            try onRead(UnsafeRawBufferPointer(piece))
            if try !decode(UnsafeRawBufferPointer(piece), into: &output, body) { return false }
        }
        try checkEnded()
        return true
    }

    /// The end of the input, at offset `end`: the one truncation, unless
    /// the frame has ended.
    func finish(inputEndsAt end: Int) throws(WeirError) {
        guard hint != 0 else { return }
        throw Self.truncation(path: path, at: end)
    }

    /// The input `path` ends at offset `end`, inside a frame: the one
    /// wording of a truncated frame (a frame read whole uses it too).
    static func truncation(path: String, at end: Int) -> WeirError {
        WeirError.endsInside(.zstd, path: path, operation: .decompress, at: end)
    }

    /// Throws unless the frame ended with the bytes given, all of its bytes
    /// (as scanned or indexed): the decoder still wants a block.
    func checkEnded() throws(WeirError) {
        guard hint != 0 else { return }
        throw WeirError.corrupt(path: path, operation: .decompress, "the frame ends before its last block")
    }
}
