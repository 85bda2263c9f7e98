import WeirFormats
import WeirSystem

/// One zstd frame of a file decoded block after block on the calling
/// thread by CZstdSplit's three steps (``BlockFrame``), from the frame's
/// start or from a checkpoint (``FrameCheckpoints``): the decoder's place in
/// the frame, kept between reads (issue 81, item 6: `weir mount` of one
/// large frame).
///
/// Each block's content stays in the ring until the ring comes round: the
/// frame's last Window_Size bytes (and the checkpoint's window, after a
/// restore) are there to copy from without decoding (``validFrom``).
///
/// Memory: the ring (the window, a block, the slack; ``footprint(windowSize:)``),
/// one block's record and the input buffer. One thread at a time.
package final class FrameCursor: @unchecked Sendable {  // one thread at a time (above)
    /// The compressed bytes read at a time.
    static let inputSize = 256 << 10

    private let frame: BlockFrame
    private let record: BlockRecord
    private let context: BlockDecodingContext
    private let file: Descriptor
    private let path: String
    /// The frame's compressed bytes end here (the file's offset).
    private let end: Int
    /// The file's offset of the next block's header.
    package private(set) var offset: Int
    /// Read from the file and not yet taken into a record: `input[used ..< filled]`,
    /// the file's bytes from `offset`.
    private let input: UnsafeMutableRawBufferPointer
    private var used = 0, filled = 0
    /// The earliest content in the ring that is the frame's.
    private var earliest: Int
    /// Whether the frame's last block was decoded and its end checked.
    package private(set) var finished = false
    /// The frame's blocks decoded so far (from its start: a restored
    /// cursor's count starts at its checkpoint's).
    package private(set) var blocks: Int
    /// The last block's digest (``BlockFrame/digest(_:)``).
    package private(set) var lastDigest: UInt32 = 0
    /// The digests of the frame's blocks as the pass that made the
    /// checkpoints decoded them, which a restored cursor's blocks must
    /// match: a read from a checkpoint cannot check the frame's checksum,
    /// so each block is checked against the one decode that did (an
    /// archive written to in place, its times set back, is not served).
    private let expected: [UInt32]?

    /// The frame at `offset` of `file` (its compressed bytes end at `end`),
    /// from its start; nil when CZstdSplit does not take it (a dictionary,
    /// a legacy frame, a header it refuses: libzstd decodes it, and tells
    /// what is wrong) or its window is larger than `windowLimit`.
    package static func start(file: Descriptor, at offset: Int, end: Int, windowLimit: Int, verifyChecksum: Bool)
        throws(WeirError) -> FrameCursor? {
        // A frame header is 18 bytes at most (RFC 8878).
        let head = try file.read(count: min(18, end - offset), at: offset, operation: .read)
        guard let header = head.withUnsafeBytes({ FrameHeader(startOf: $0) }),
              header.windowSize <= UInt64(windowLimit) else { return nil }
        // A header CZstdSplit refuses (or no memory for its ring): libzstd's, as before.
        guard let frame = head.withUnsafeBytes({ bytes in
            try? BlockFrame(header: bytes, lag: 0, verifyChecksum: verifyChecksum, path: file.path)
        }) else { return nil }
        return try FrameCursor(frame: frame, file: file, offset: offset + frame.headerSize, end: end, earliest: 0,
                               blocks: 0, expected: nil)
    }

    /// The frame at the block of `checkpoint`, of `file` (its compressed
    /// bytes end at `end`), its window's bytes written by `fill`; each block
    /// it decodes is checked against `digests`, the frame's blocks' as the
    /// checkpoints' pass decoded them.
    ///
    /// - Throws: what ``BlockFrame/init(restoring:lag:path:fill:)`` throws.
    package static func restore(_ checkpoint: FrameCheckpoints.Checkpoint, digests: [UInt32], file: Descriptor,
                                end: Int, fill: (UnsafeMutableRawBufferPointer) throws(WeirError) -> Void)
        throws(WeirError) -> FrameCursor {
        let frame = try BlockFrame(restoring: checkpoint.state, lag: 0, path: file.path, fill: fill)
        return try FrameCursor(frame: frame, file: file, offset: checkpoint.blockOffset, end: end,
                               earliest: checkpoint.state.produced - checkpoint.state.windowCount,
                               blocks: checkpoint.blockIndex, expected: digests)
    }

    private init(frame: BlockFrame, file: Descriptor, offset: Int, end: Int, earliest: Int, blocks: Int,
                 expected: [UInt32]?) throws(WeirError) {
        (self.blocks, self.expected) = (blocks, expected)
        self.frame = frame
        self.file = file
        path = file.path
        self.offset = offset
        self.end = end
        self.earliest = earliest
        record = try BlockRecord(path: path)
        context = try BlockDecodingContext(path: path)
        input = .allocate(byteCount: Self.inputSize, alignment: 64)
    }

    deinit { input.deallocate() }

    /// The memory a cursor of a frame with `windowSize` holds.
    package static func footprint(windowSize: Int) -> Int {
        Int(BlockFrame.ringBytes(windowSize: UInt64(windowSize), lag: 0)) + BlockRecord.footprint + inputSize
            + (64 << 10)
    }

    /// The frame's content decoded so far.
    package var produced: Int { frame.produced }

    /// The earliest content offset the ring still holds.
    package var validFrom: Int { max(earliest, frame.produced - frame.windowSize) }

    /// Window_Size.
    package var windowSize: Int { frame.windowSize }

    /// The content `from ..< from + count`, in the ring: within
    /// ``validFrom`` ..< ``produced``; valid until the next ``next()``.
    package func content(from: Int, count: Int) -> UnsafeRawBufferPointer {
        frame.content(from: from, count: count)
    }

    /// The state between two blocks (not after the last), for a checkpoint.
    package func saveState() -> BlockFrameState { frame.saveState() }

    /// Decodes the next block; returns its content (valid until the next
    /// call), or nil once the frame's last block was decoded and its end
    /// (content size, checksum) checked.
    ///
    /// - Throws: libzstd's errors for a damaged block or end, as
    ///   ``BlockFrame`` gives them; `.truncated` when the file ends inside
    ///   the frame. A cursor that threw is not used again.
    package func next() throws(WeirError) -> UnsafeRawBufferPointer? {
        if finished { return nil }
        if frame.lastExecuted {
            try finish()
            return nil
        }
        record.reset()
        while !record.isComplete {
            if used == filled { try refill() }
            let taken = record.take(UnsafeRawBufferPointer(rebasing: input[used ..< filled]),
                                    blockMaximum: frame.blockMaximumSize)
            used += taken
            offset += taken
            if taken == 0 { break }  // a header that states no valid size: the scan refuses it
        }
        frame.scan(record)
        context.decode(record)
        let content = try frame.execute(record)
        frame.hash(content)
        let digest = BlockFrame.digest(content)
        if let expected, blocks >= expected.count || expected[blocks] != digest {
            throw WeirError.changedWhileRead(path: path, operation: .read, shrank: false, changed: true)
        }
        (lastDigest, blocks) = (digest, blocks + 1)
        return content
    }

    /// After the last block: the checksum's bytes, if any, and the frame's end checked.
    private func finish() throws(WeirError) {
        var checksum = [UInt8]()
        while checksum.count < (frame.hasChecksum ? 4 : 0) {
            if used == filled { try refill() }
            let take = min(4 - checksum.count, filled - used)
            checksum += UnsafeRawBufferPointer(rebasing: input[used ..< used + take])
            used += take
            offset += take
        }
        try checksum.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in try frame.end(checksum: bytes) }
        }.get()
        finished = true
    }

    /// Reads the frame's next compressed bytes into the input buffer.
    private func refill() throws(WeirError) {
        let count = min(input.count, end - offset)
        guard count > 0 else {
            throw WeirError.truncated(path: path, operation: .decompress, "the frame ends at offset \(offset)")
        }
        let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0 ..< count]), at: offset,
                                operation: .read)
        guard got > 0 else {
            throw WeirError.truncated(path: path, operation: .decompress, "the file ends at offset \(offset)")
        }
        (used, filled) = (0, got)
    }
}
