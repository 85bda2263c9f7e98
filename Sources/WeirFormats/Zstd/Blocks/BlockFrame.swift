import CXXHash
import CZstd
import CZstdSplit
import WeirSystem

/// One zstd frame decoded by blocks (Sources/CZstdSplit, issue 81), the
/// sequential part of it: the frame's header, the scan of each block in
/// order (``scan(_:)``), phase 2 of each block in order (``execute(_:)``)
/// into a ring that holds the window, and the end of the frame (content
/// size and checksum, ``end(checksum:)``). Phase 1, the entropy decoding
/// that takes most of the time, runs on the workers in between
/// (``BlockDecodingContext``).
///
/// Output: each block's content, in the ring, where it stays until the
/// ring comes round: the ring holds the frame's window, a block, the
/// slack zsplit.h asks, and `lag` bytes more for content not yet written
/// out. Matches may reach Window_Size back and no further (RFC 8878: an
/// offset past it is corrupt; libzstd's streaming buffer, a little larger,
/// may take one a few blocks further, where this refuses it first).
///
/// Errors are libzstd's (``Zstd/error(_:path:operation:)``): a block the
/// format refuses is "Data corruption detected", a block past the declared
/// content size where libzstd's buffer is that size "Destination buffer is
/// too small", a checksum that differs a checksum mismatch, as libzstd
/// words them.
///
/// Owned in parts, one thread at a time each: the scan by the reading
/// thread; phase 2 (``execute(_:)``, then ``end(checksum:)``) by whoever
/// holds the caller's drain; ``hash(_:)`` by one thread at a time, in
/// order, before ``end(checksum:)``; the ring's content may be read by any
/// thread where ``content(from:count:)`` points while the caller keeps the
/// ring from coming round to it. The ring lives as long as the frame:
/// whoever reads its content holds the frame.
package final class BlockFrame: @unchecked Sendable {  // see "Owned in parts", above
    /// Whether its last block was executed.
    package private(set) var lastExecuted = false

    private let frame: OpaquePointer
    private var exec = zs_exec()
    private var ring = zs_ring()
    /// XXH64 of the content (``hash(_:)``), when its checksum is checked.
    private let hash: OpaquePointer?
    private let header: zs_frame_header
    private let blockMaximum: Int
    private let path: String

    /// Reads the frame header at the start of `bytes` (which hold it whole).
    ///
    /// - Throws: libzstd's error for a header it refuses; out of memory
    ///   when the ring cannot be mapped.
    package init(header bytes: UnsafeRawBufferPointer, lag: Int, verifyChecksum: Bool, path: String)
        throws(WeirError) {
        self.path = path
        guard let frame = zs_frame_create() else {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a block decoder")
        }
        self.frame = frame
        var header = zs_frame_header()
        let status = zs_frame_begin(frame, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                                    &header)
        self.header = header
        blockMaximum = Int(header.block_max)
        hash = verifyChecksum && header.checksum != 0 ? XXH64_createState() : nil
        hash.map { _ = XXH64_reset($0, 0) }
        let ringBytes = Self.ringBytes(windowSize: header.window_size, lag: lag)
        if status != 0 { throw Self.error(status, path: path) }
        if zs_ring_init(&ring, ringBytes) != 0 {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a ring of \(ringBytes) bytes")
        }
        zs_exec_begin(&exec)
    }

    /// The frame of `state`, restored to where it was saved: its window's
    /// bytes (``BlockFrameState/windowCount``) are written by `fill` into
    /// the buffer it is handed, the ring's room before the next block. The
    /// content's checksum is not checked from here: it covers the whole
    /// frame, whose start this decoder does not see (``end(checksum:)``
    /// takes any).
    ///
    /// - Throws: libzstd's corruption error for a state that is not one
    ///   (zsplit.h, zs_frame_restore); out of memory when the ring cannot be
    ///   mapped; what `fill` throws.
    package init(restoring state: BlockFrameState, lag: Int, path: String,
                 fill: (UnsafeMutableRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) {
        self.path = path
        guard let frame = zs_frame_create() else {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a block decoder")
        }
        self.frame = frame
        header = state.header
        blockMaximum = Int(header.block_max)
        hash = nil
        let status = state.scan.withUnsafeBytes { zs_frame_restore(frame, $0.baseAddress, $0.count) }
        let ringBytes = Self.ringBytes(windowSize: header.window_size, lag: lag)
        if status != 0 { throw Self.error(status, path: path) }
        if zs_ring_init(&ring, ringBytes) != 0 {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a ring of \(ringBytes) bytes")
        }
        exec = state.exec
        // The ring's three mappings make the window contiguous wherever it falls.
        let count = state.windowCount, start = state.produced - count
        try fill(UnsafeMutableRawBufferPointer(start: ring.mid + start % ring.size, count: count))
    }

    /// The frame as it is now, between two blocks (after ``execute(_:)``
    /// of a block that was not the last): with the content's last
    /// ``BlockFrameState/windowCount`` bytes, what ``init(restoring:lag:path:fill:)``
    /// decodes the next block from.
    package func saveState() -> BlockFrameState {
        var scan = [UInt8](repeating: 0, count: zs_frame_state_size())
        scan.withUnsafeMutableBytes { zs_frame_save(frame, $0.baseAddress) }
        return BlockFrameState(scan: scan, exec: exec, header: header)
    }

    /// The frame's content so far.
    package var produced: Int { Int(exec.produced) }

    /// Window_Size: the content before a block that its matches may reach.
    package var windowSize: Int { Int(header.window_size) }

    deinit {
        zs_ring_free(&ring)
        zs_frame_free(frame)
        hash.map { _ = XXH64_freeState($0) }
    }

    /// The ring's size for a window: the window, a block and its wide
    /// copies, the slack zsplit.h asks, and `lag` bytes of content not yet
    /// written out (rounded up to pages when mapped).
    package static func ringBytes(windowSize: UInt64, lag: Int) -> UInt64 {
        windowSize + UInt64(ZS_BLOCK_MAX) + UInt64(ZS_WILDCOPY) + UInt64(ZS_RING_SLACK) + UInt64(lag)
    }

    /// Bytes past a block's end that phase 2 may write (wide copies).
    package static let wildCopy = Int(ZS_WILDCOPY)

    /// The frame header's bytes.
    package var headerSize: Int { Int(header.header_size) }

    /// The most content bytes a block may hold, which also bounds its
    /// compressed bytes (``BlockRecord/take(_:blockMaximum:)``).
    package var blockMaximumSize: Int { blockMaximum }

    /// Whether a 4-byte checksum follows the last block.
    package var hasChecksum: Bool { header.checksum != 0 }

    /// The scan of the block in `record` (all its bytes in), the frame's
    /// blocks in order. A failure is kept in the record, the block's error,
    /// reported when the block is executed.
    package func scan(_ record: BlockRecord) {
        var used = 0
        let status = zs_scan_block(frame, record.input.assumingMemoryBound(to: UInt8.self), record.filled, &used,
                                   &record.block)
        // The bytes given are the block's, all of them: the scan takes them all or refuses the block.
        record.status = status == 0 && used != record.filled ? Int32(ZS_ERR_CORRUPT) : status
    }

    /// Whether the block just scanned is the frame's last.
    package func isLast(_ record: BlockRecord) -> Bool { record.status == 0 && record.block.last != 0 }

    /// Phase 2 of `record`, its phase 1 done: its content, in the ring
    /// until the ring comes round to it.
    ///
    /// - Throws: the block's error, from any step.
    package func execute(_ record: BlockRecord) throws(WeirError) -> UnsafeRawBufferPointer {
        if record.status != 0 { throw Self.error(record.status, path: path) }
        let position = Int(exec.produced % UInt64(ring.size))
        let destination = ring.mid + position
        let history = min(exec.produced, header.window_size)
        let status = zs_execute(&exec, &record.block, destination, history)
        if status != 0 { throw Self.error(status, path: path) }
        lastExecuted = record.block.last != 0
        return UnsafeRawBufferPointer(start: destination, count: Int(record.block.size))
    }

    /// The bytes of the ring: a block's content stays there until the ring
    /// comes round to it, `ringSize` bytes of content later (less what the
    /// window and the next block hold).
    package var ringSize: Int { ring.size }

    /// The content from frame position `start` (at most ``ringSize`` bytes
    /// before ``produced``), `count` bytes, contiguous whatever the ring's
    /// turn.
    package func content(from start: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: ring.mid + start % ring.size, count: count)
    }

    /// Adds the frame's next content, in order, to the checksum's hash. It
    /// may run on another thread than the rest, one call at a time, all
    /// before ``end(checksum:)``.
    /// A block's content digest (XXH3's 64 bits, the low 32 kept): what a
    /// checkpoint's cursor checks each block it decodes again against, the
    /// one pass that made the checkpoints having checked the frame's
    /// checksum (``FrameCheckpoints`` in WeirSeekable).
    package static func digest(_ content: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: XXH3_64bits(content.baseAddress, content.count))
    }

    package func hash(_ content: UnsafeRawBufferPointer) {
        if let hash, content.count > 0 { _ = XXH64_update(hash, content.baseAddress, content.count) }
    }

    /// The end of the frame, its last block executed: its content size, and
    /// its checksum in `checksum` (4 bytes, or none).
    package func end(checksum: UnsafeRawBufferPointer) throws(WeirError) {
        var used = 0
        var digest: UInt64 = 0
        if let hash {
            digest = XXH64_digest(hash)
        } else if checksum.count == 4 {
            // Not checked (`--no-check`): the checksum given is taken as the content's.
            digest = UInt64(checksum.loadUnaligned(as: UInt32.self).littleEndian)
        }
        let bytes = checksum.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let status = zs_frame_end(frame, exec.produced, digest, bytes, checksum.count, &used)
        if status != 0 { throw Self.error(status, path: path) }
    }

    /// The ``WeirError`` libzstd gives for what CZstdSplit reports as `status`.
    static func error(_ status: Int32, path: String) -> WeirError {
        let code: ZSTD_ErrorCode
        switch status {
        case Int32(ZS_ERR_CHECKSUM): code = ZSTD_error_checksum_wrong
        case Int32(ZS_ERR_MEMORY): code = ZSTD_error_memory_allocation
        case Int32(ZS_ERR_TRUNCATED): code = ZSTD_error_srcSize_wrong
        // A block past the declared content size where libzstd's buffer is that size (zsplit.c, zs_execute).
        case Int32(ZS_ERR_DST_SIZE): code = ZSTD_error_dstSize_tooSmall
        default: code = ZSTD_error_corruption_detected
        }
        return Zstd.error(0 &- Int(code.rawValue), path: path, operation: .decompress)
    }
}
