import Dispatch
import WeirSystem

/// The one streaming loop, for every format and every path that streams a
/// frame (a zstd frame; a gzip member, an xz or .lzma stream, an lz4 frame:
/// each format's ``MemberDecoding``): the pipeline's frames decoded region
/// by region or streamed, the seekable reader's reads up to an end, the
/// measure of frames without a size, a range read from a pipe, and each
/// member of a stream of every format (``MixedStreamDecoder``). The bytes
/// come from a stream (given in pieces: ``decode(_:into:_:)``,
/// ``decodeMember(_:consumed:into:_:)``) or from a frame at an offset of a
/// file (``decodeFrame(in:at:compressedSize:buffer:into:onRead:_:)``); the
/// content goes to a ``DecoderOutput`` and, as it comes, to a body that may
/// stop the decoding (a read that ends inside the frame).
///
/// It holds the checks once, with one message each, in the member's format's
/// words (``MemberDecoding/corrupt(_:)``): that the decoder makes progress,
/// that no bytes follow the end of a frame (unless a stream of frames goes
/// on), that a frame ends where its bytes end (``checkEnded()``), and that
/// the input does not end inside a frame (``finish(inputEndsAt:)``, the one
/// truncation, naming the format).
///
/// A value owned by one thread at a time, with its member decoder.
package struct FrameDecoder {
    /// How much of a frame read from a file is read at once: 1 MiB.
    package static let pieceSize = 1 << 20

    /// The input the decoder takes between two counts told to whoever
    /// follows the progress (256 KiB); unbounded when nobody follows.
    package static let step = 1 << 18

    /// What a run of the decoder over the bytes given came to.
    package enum Outcome {
        /// Every byte is in and its content out: the frame wants more.
        case needsInput
        /// The frame ended (the bytes after it, if any, not taken).
        case ended
        /// The body stopped it.
        case stopped
    }

    /// The format's decoder, started on the frame (a zstd context needs no
    /// start for its first frame, nor between frames of a stream).
    let member: any MemberDecoding
    /// How errors name the input, and the operation.
    let path: String
    let operation: WeirError.Operation
    /// Whether the bytes are a stream of zstd frames (a pipe read for a
    /// range): a frame that ends is followed by the next, not by the end.
    let followsFrames: Bool
    /// Whether the frame has ended (and its content is all out).
    package private(set) var ended = false
    /// Content bytes decoded.
    package private(set) var produced = 0

    init(member: any MemberDecoding, path: String, operation: WeirError.Operation = .decompress,
         followsFrames: Bool = false) {
        self.member = member
        self.path = path
        self.operation = operation
        self.followsFrames = followsFrames
    }

    /// A decoder of zstd frames through `context`.
    package init(context: DecompressionContext, path: String, followsFrames: Bool = false) {
        self.init(member: ZstdMemberDecoder(context: context, path: path), path: path, followsFrames: followsFrames)
    }

    /// Decodes `source`, the next bytes, into `output`, handing `body` each
    /// stretch of content as it is decoded, until every byte is in and its
    /// content out, or `body` returns false.
    ///
    /// - Returns: false when `body` stopped it.
    /// - Throws: the format's corrupt message when the decoder makes no
    ///   progress or bytes follow the end of the frame; what the decoder,
    ///   `output` or `body` throws.
    @discardableResult
    package mutating func decode(_ source: UnsafeRawBufferPointer, into output: inout some DecoderOutput,
                         _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Bool = { _ in true })
        throws(WeirError) -> Bool {
        var used = 0
        while !ended || used < source.count {
            if ended, !followsFrames { throw member.corrupt("bytes after the end of the frame") }
            switch try decodeMember(source, consumed: &used, into: &output, body) {
            case .stopped: return false
            case .needsInput: return true
            case .ended: continue
            }
        }
        return true
    }

    /// Decodes `source[consumed...]` into `output`, advancing `consumed`,
    /// handing `body` each stretch of content as it is decoded, until every
    /// byte is in and its content out, the frame ends (what follows it is
    /// left), or `body` returns false. The one loop.
    ///
    /// - Throws: the format's corrupt message when the decoder makes no
    ///   progress; what the decoder, `output` or `body` throws.
    package mutating func decodeMember(_ source: UnsafeRawBufferPointer, consumed used: inout Int,
                               into output: inout some DecoderOutput,
                               _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Bool = { _ in true })
        throws(WeirError) -> Outcome {
        // Someone follows the progress: the decoder is given a step at a
        // time, each told once taken.
        let tell = member.consumed
        let step = tell == nil ? Int.max : FrameDecoder.step
        while true {
            let (buffer, start) = try output.buffer()
            let before = used
            var filled = start
            let given = source.count - used > step ? UnsafeRawBufferPointer(rebasing: source[..<(used + step)]) : source
            ended = try member.step(given, consumed: &used, into: buffer, filled: &filled)
            tell?(used - before)
            produced += filled - start
            try output.decoded(upTo: filled)
            if filled > start {
                let piece = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[start ..< filled])
                if try !body(piece) { return .stopped }
            }
            if ended { return .ended }
            if used == before, filled == start, used < source.count {
                // Neither input taken nor output made, with room for both:
                // refused rather than spun on (never seen).
                throw member.corrupt("the decoder makes no progress")
            }
            // A full buffer may leave content in the decoder: ask again.
            if used == source.count, filled < buffer.count || filled == start { return .needsInput }
        }
    }

    /// As ``decode(_:into:_:)-(UnsafeRawBufferPointer,_,_)``, for bytes in
    /// several regions (read pieces, not joined).
    @discardableResult
    package mutating func decode(_ source: DispatchData, into output: inout some DecoderOutput,
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
    package mutating func decodeFrame(in file: Descriptor, at offset: Int, compressedSize: Int,
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

    /// The end of the input, at offset `end`: the one truncation, naming
    /// the member's format, unless the frame has ended.
    package func finish(inputEndsAt end: Int) throws(WeirError) {
        guard !ended else { return }
        throw WeirError.endsInside(member.format, path: path, operation: operation, at: end)
    }

    /// The input `path` ends at offset `end`, inside a zstd frame: the one
    /// truncation of ``finish(inputEndsAt:)``, for a frame read whole.
    package static func truncation(path: String, at end: Int) -> WeirError {
        WeirError.endsInside(.zstd, path: path, operation: .decompress, at: end)
    }

    /// Throws unless the frame ended with the bytes given, all of its bytes
    /// (as scanned or indexed): the decoder still wants a block.
    package func checkEnded() throws(WeirError) {
        guard !ended else { return }
        throw member.corrupt("the frame ends before its last block")
    }
}
