import WeirSystem

/// Decodes a stream of frames of any format weir reads, one after another,
/// telling each frame's format by its magic number as zstd 1.5.4's
/// `FIO_decompressFrames` does: gzip members, xz streams, .lzma, lz4 frames
/// and zstd frames may follow one another in one input. Each member goes
/// through the one streaming loop, ``FrameDecoder``, over its format's
/// ``MemberDecoding`` (made for the first member of that format, then
/// reset); the loop holds the checks and the truncation. What is this
/// type's own: the formats told apart, pass-through, and the output block.
///
/// Input comes in pieces of any size (``feed(_:emit:)``); decoded bytes go
/// out through `emit` in blocks of at most ``blockSize``, the block lent for
/// the call, told when a block ends a member (an empty block when the
/// member ended with the last one): a block never holds bytes of two
/// members, so the caller can hold a member's blocks until its end.
/// A magic number split between two pieces is kept until whole.
/// ISA-L's inflate reads its 32 KiB of history just before where it writes,
/// so the output buffer keeps the last ``history`` bytes written in front of
/// the block: written bytes stay in place until the block is full, then
/// their tail moves to the front.
/// With pass-through (`-dcf`, `--pass-through`), data that starts no frame
/// is copied to the output with all that follows it, as zstd copies it.
/// When decoding fails, the members that ended before have gone out; the
/// failing member's bytes not yet sent are dropped (issue 59).
/// Used by one thread at a time.
package final class MixedStreamDecoder {
    /// Where decoded blocks go: the block, and whether it ends a member.
    package typealias Emit = (UnsafeRawBufferPointer, _ endsMember: Bool) throws(WeirError) -> Void

    /// The output block: large enough that a block costs little to hand on.
    package static let blockSize = 1 << 20
    /// Deflate's window.
    static let history = 32 << 10

    private let options: DecodingOptions
    /// Whether the whole input comes in one piece (gzip then through ISA-L).
    private let wholeInput: Bool
    /// Each format's decoder, made for its first member and kept.
    private var decoders: [CompressedFormat: any MemberDecoding] = [:]
    /// The member being decoded, if any, through the one streaming loop.
    private var current: FrameDecoder?
    private let path: String
    private let operation: WeirError.Operation
    private let passThrough: Bool
    /// Copying the rest of the input unchanged (pass-through).
    private var copying = false
    private let block = UnsafeMutableRawBufferPointer.allocate(byteCount: history + blockSize, alignment: 64)
    /// Bytes before `sent` are out (or history); `sent..<filled` are not yet.
    private var sent = history
    private var filled = history
    /// The first bytes of the next frame, until there are enough to tell its format.
    private let magic = UnsafeMutableRawBufferPointer.allocate(byteCount: CompressedFormat.magicLength, alignment: 8)
    private var magicCount = 0
    private var memberStart = 0
    /// The input bytes fed so far (or decoded before this decoder, by
    /// ``GzipMemberScan``: where the first piece starts in the input).
    package var position = 0
    /// The frames decoded whole.
    package private(set) var frames = 0

    /// - Parameter wholeInput: the whole input comes in one ``feed(_:emit:)``
    ///   (a mapped file), which ISA-L's inflate needs.
    package init(options: DecodingOptions, path: String, operation: WeirError.Operation, wholeInput: Bool = false) {
        self.options = options
        self.wholeInput = wholeInput
        self.passThrough = options.passThrough
        self.path = path
        self.operation = operation
    }

    deinit {
        block.deallocate()
        magic.deallocate()
    }

    /// Decodes `input`, the next piece of the stream. On a failure, the
    /// failing member's bytes not yet sent are dropped, and it is thrown.
    package func feed(_ input: UnsafeRawBufferPointer, emit: Emit) throws(WeirError) {
        try decodePiece(input, emit: emit)
        position += input.count
        try flush(emit: emit)
    }

    /// Sends the bytes decoded and not yet sent; with `endsMember`, told
    /// that they end a member, even when there are none.
    private func flush(emit: Emit, endsMember: Bool = false) throws(WeirError) {
        if filled > sent || endsMember {
            try emit(UnsafeRawBufferPointer(rebasing: block[sent..<filled]), endsMember)
            sent = filled
        }
    }

    private func decodePiece(_ input: UnsafeRawBufferPointer,
                             emit: Emit) throws(WeirError) {
        var consumed = 0
        while consumed < input.count {
            if copying {
                try put(UnsafeRawBufferPointer(rebasing: input[consumed...]), emit: emit)
                return
            }
            if current == nil && magicCount == 0 && input.count - consumed >= magic.count {
                // The magic number in this piece: the member starts here.
                memberStart = position + consumed
                let head = UnsafeRawBufferPointer(rebasing: input[consumed..<consumed + magic.count])
                guard try begin(CompressedFormat.detect(head)) != nil else { continue }
            }
            if current == nil {
                if magicCount == 0 { memberStart = position + consumed }
                let take = min(magic.count - magicCount, input.count - consumed)
                UnsafeMutableRawBufferPointer(rebasing: magic[magicCount..<magicCount + take])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[consumed..<consumed + take]))
                magicCount += take
                consumed += take
                guard magicCount == magic.count else { break }
                guard let format = try begin(CompressedFormat.detect(UnsafeRawBufferPointer(magic))) else {
                    try put(UnsafeRawBufferPointer(magic), emit: emit)
                    magicCount = 0
                    continue
                }
                let head = UnsafeRawBufferPointer(magic)
                var used = 0
                magicCount = 0
                if try decode(head, consumed: &used, emit: emit) || used < head.count {
                    throw .endsInside(format, path: path, operation: operation, at: position + consumed)
                }
            }
            if try decode(input, consumed: &consumed, emit: emit) {
                current = nil
                frames += 1
                try flush(emit: emit, endsMember: true)
            }
        }
    }

    /// Ends the stream: it must not end inside a frame. With pass-through,
    /// 1 to 3 bytes after the last frame go out as they are (as zstd does).
    package func finish(emit: Emit) throws(WeirError) {
        try current?.finish(inputEndsAt: position)
        if magicCount > 0 && passThrough {
            try put(UnsafeRawBufferPointer(rebasing: magic[0..<magicCount]), emit: emit)
            magicCount = 0
            try flush(emit: emit)
        }
        if magicCount > 0 {
            if let format = CompressedFormat.detect(UnsafeRawBufferPointer(rebasing: magic[0..<magicCount])) {
                throw .endsInside(format, path: path, operation: operation, at: position)
            }
            throw .unknownFrame(path: path, operation: operation, offset: memberStart)
        }
    }

    /// Starts a member of `format` and returns it; nil when none starts
    /// here and the rest is copied (pass-through).
    private func begin(_ format: CompressedFormat?) throws(WeirError) -> CompressedFormat? {
        guard let format else {
            guard passThrough else { throw .unknownFrame(path: path, operation: operation, offset: memberStart) }
            copying = true
            return nil
        }
        let decoder = if let kept = decoders[format] { kept } else { try made(format) }
        try decoder.start(at: memberStart)
        current = FrameDecoder(member: decoder, path: path, operation: operation)
        return format
    }

    /// The decoder for members of `format`, made for the first.
    private func made(_ format: CompressedFormat) throws(WeirError) -> any MemberDecoding {
        let made: any MemberDecoding = switch format {
        case .zstd: try ZstdMemberDecoder(options: options, path: path, operation: operation)
        case .gzip: GzipMemberDecoder(path: path, operation: operation, wholeInput: wholeInput)
        case .lz4: Lz4MemberDecoder(path: path, operation: operation)
        case .xz, .lzma: LzmaMemberDecoder(format: format, windowLimit: options.windowLimit, path: path,
                                           operation: operation)
        }
        decoders[format] = made
        return made
    }

    /// Copies `bytes` to the output (pass-through), sending full blocks.
    private func put(_ bytes: UnsafeRawBufferPointer,
                     emit: Emit) throws(WeirError) {
        var taken = 0
        while taken < bytes.count {
            let step = min(bytes.count - taken, block.count - filled)
            UnsafeMutableRawBufferPointer(rebasing: block[filled..<filled + step])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[taken..<taken + step]))
            (taken, filled) = (taken + step, filled + step)
            if filled == block.count {
                try emit(UnsafeRawBufferPointer(rebasing: block[sent..<filled]), false)
                (sent, filled) = (Self.history, Self.history)
            }
        }
    }

    /// Runs the member's decoder on `source` until it needs more input
    /// (false) or the member ends (true); full blocks go out on the way.
    /// Without a member begun (``begin(_:)``), nothing is decoded (false),
    /// and the loop of ``decodePiece(_:emit:)`` begins one.
    private func decode(_ source: UnsafeRawBufferPointer, consumed: inout Int,
                        emit: Emit) throws(WeirError) -> Bool {
        var output = BlockOutput(owner: self)
        let outcome = try current?.decodeMember(source, consumed: &consumed, into: &output) { _ throws(WeirError) in
            if filled == block.count {
                try emit(UnsafeRawBufferPointer(rebasing: block[sent..<filled]), false)
                UnsafeMutableRawBufferPointer(rebasing: block[0..<Self.history])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: block[filled - Self.history..<filled]))
                (sent, filled) = (Self.history, Self.history)
            }
            return true
        }
        return outcome == .ended
    }

    /// The block as the loop's output: decoded into after what it holds;
    /// once full, sent by the loop's body, its last ``history`` bytes kept.
    private struct BlockOutput: DecoderOutput {
        unowned let owner: MixedStreamDecoder

        func buffer() -> (UnsafeMutableRawBufferPointer, filled: Int) { (owner.block, owner.filled) }
        func decoded(upTo filled: Int) { owner.filled = filled }
    }
}
