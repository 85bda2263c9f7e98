import CZstd
import Glibc
import WeirFormats
import WeirSystem

extension MemberIndex {
    /// Encodes members into version 2 as a scan finds them. While the
    /// compression runs it holds one block of raw columns: each block that
    /// fills goes as it is to a file (``IndexSpill``), and the blocks are
    /// compressed at the end, from the file, when the run's chunks are no
    /// longer in flight, so the compressor's memory is not added to theirs
    /// (it was, +2.5 MiB at -3 through a pipe, and more at -9). Where no file
    /// can be made or written, blocks are compressed as they fill, as before.
    /// Used by one thread at a time.
    package final class ColumnWriter: TarMemberSink {
        /// The block being filled, and what each member is coded against.
        private let block: ColumnBlock
        private static let columnCount = ColumnBlock.columnCount

        package var count: Int { block.total }
        /// A block's head (member count, column lengths), reused.
        private var head: [UInt8] = []
        /// Whether the compressor has been given anything yet.
        private var started = false
        /// Blocks that filled, raw, in order, waiting for the end; nil before
        /// the first or when they are compressed as they fill.
        private var blocks: IndexSpill?
        /// Whether filled blocks may still wait in ``blocks`` (false once a
        /// file could not be made or written).
        private var defers = true
        /// What the compressor gives back, reused (made at its first call).
        private var output: [UInt8] = []
        private static let outputSize = 64 << 10
        /// The compressor's table sizes at most (level 3's).
        private static let largestHashLog: UInt32 = 17
        private static let largestChainLog: UInt32 = 16
        /// The stream's compressed bytes so far: those past ``spillBound`` in
        /// ``spill`` (in order), the rest here.
        private var compressed: [UInt8] = []
        private var spill: IndexSpill?
        /// Whether bytes may still go to a spill file (false once one could
        /// not be made or written).
        private var spills = true
        private let context: OpaquePointer?
        private let level: Int
        /// The first failure (libzstd's, or reading the blocks back);
        /// reported by ``frame(endedEarly:endOffset:contentSize:path:)``.
        private var failure: String?

        /// Compressed bytes kept in memory before the rest go to a spill file.
        private let spillBound: Int
        /// Raw column bytes that close a block (``MemberIndex/blockBytes``).
        private let blockBytes: Int
        /// Where the spill files go (nil: `TMPDIR`, else /tmp), and what the blocks' file takes at most.
        private let spillFolder: String?
        private let blocksCapacity: Int

        /// A writer compressing at `level`, keeping `spillBound` compressed
        /// bytes in memory (``MemberIndex/spillBound``) and closing a block at
        /// `blockBytes` (``MemberIndex/blockBytes``): the tests' are smaller.
        /// Its files go in `spillFolder` (else `TMPDIR`, else /tmp); the one
        /// its blocks wait in takes `blocksCapacity` bytes at most (the tests',
        /// to stop it short as a full disk would).
        package init(level: Int = 3, spillBound: Int = MemberIndex.spillBound,
                     blockBytes: Int = MemberIndex.blockBytes, spillFolder: String? = nil,
                     blocksCapacity: Int = .max) {
            self.level = level
            self.spillBound = spillBound
            self.spillFolder = spillFolder
            self.blocksCapacity = blocksCapacity
            self.blockBytes = blockBytes
            // Every buffer at its full size at once, never grown: weir's
            // allocator keeps one arena and never hands freed memory back,
            // so buffers that grew as members came were carved out of a chunk
            // buffer freed a moment before, and the next chunk's buffer then
            // took fresh memory (+8 MiB, one chunk, in some runs through a pipe
            // at -1). Untouched capacity costs no memory.
            block = ColumnBlock(blockBytes: MemberIndex.blockBytes)
            head.reserveCapacity(64)
            compressed.reserveCapacity(spillBound + Self.outputSize)
            context = ZSTD_createCCtx()
            if let context {
                ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level))
                ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
                ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, MemberIndex.windowLog)
                // Tables no larger than level 3's: above it libzstd's grow to
                // several MiB (about 12 at 9) for a window of 1 MiB; capped,
                // the Linux tarball's index at -9 is 0.8% larger.
                let tables = ZSTD_getCParams(Int32(level), 0, 0)
                if tables.hashLog > Self.largestHashLog {
                    ZSTD_CCtx_setParameter(context, ZSTD_c_hashLog, Int32(Self.largestHashLog))
                }
                if tables.chainLog > Self.largestChainLog {
                    ZSTD_CCtx_setParameter(context, ZSTD_c_chainLog, Int32(Self.largestChainLog))
                }
            }
        }

        deinit {
            ZSTD_freeCCtx(context)
        }

        /// Takes `member`, the next member in archive order.
        package func append(_ member: Member) {
            Record.with(member) { append($0) }
        }

        /// Takes `member`, the next member in archive order; its names are
        /// read during the call only.
        package func append(_ member: Record) {
            block.append(member)
            if block.raw >= blockBytes { flushBlock(end: false) }
        }

        /// Takes `part`'s members (a chunk's walk, ``TarSegment``), next in
        /// archive order: the columns appending each in turn would give,
        /// byte for byte, and the blocks closed where they would close. Its
        /// first member is coded again against the block's last; the others
        /// are copied, a column at a time (``ColumnBlock``).
        package func join(_ part: ColumnBlock) {
            guard part.count > 0 else { return }
            var cursor = ColumnBlock.Cursor()
            block.appendFirst(of: part, cursor: &cursor)
            while cursor.member < part.count {
                let (members, raw) = block.membersFitting(part, cursor: cursor, blockBytes: blockBytes)
                block.copy(members, raw: raw, of: part, cursor: &cursor)
                if block.raw >= blockBytes { flushBlock(end: false) }
            }
            block.takeState(of: part)
        }

        /// Sends the block's columns to the compressor (and, with `end`, ends
        /// its frame); a block that fills before the end waits in ``blocks``.
        ///
        /// The block's head (its member count and column lengths) and then
        /// each column go to the compressor from where they are, not joined
        /// into one buffer first: a joined block would be one more MiB held
        /// (a peak through a pipe that grew with a tar past a block's
        /// members). libzstd's streaming output does not depend on how its
        /// input is cut into calls, so the frame's bytes are the same.
        private func flushBlock(end: Bool) {
            head.removeAll(keepingCapacity: true)
            let hasMembers = block.count > 0
            if hasMembers {
                head.appendUvarint(UInt64(block.count))
                for index in 0 ..< Self.columnCount { head.appendUvarint(UInt64(block.bytes(column: index).count)) }
            }
            block.endBlock()
            guard context != nil, failure == nil else {
                if failure == nil { failure = "libzstd: out of memory" }
                return
            }
            if !end, defers, deferBlock() { return }
            if end, let blocks {
                // The blocks that waited go first, read back a piece at a time.
                self.blocks = nil
                compressWaiting(blocks)
            }
            if end, !started, hasMembers {
                // An index of one block goes to libzstd in one call that ends
                // the frame, as it always has: libzstd then sizes its tables
                // to it and writes its content size, and the bytes stay those
                // of the versions before.
                var whole = head
                whole.reserveCapacity(head.count + (0 ..< Self.columnCount).reduce(0) {
                    $0 + block.bytes(column: $1).count
                })
                for index in 0 ..< Self.columnCount {
                    whole.append(contentsOf: block.bytes(column: index))
                    block.removeAll(column: index)
                }
                whole.withUnsafeBytes { compress($0, end: true) }
                return
            }
            let pieces = hasMembers ? Self.columnCount : 0
            head.withUnsafeBytes { compress($0, end: end && pieces == 0) }
            for index in 0 ..< pieces {
                compress(block.bytes(column: index), end: end && index == pieces - 1)
                block.removeAll(column: index)
            }
        }

        /// Writes the block (head and columns) to ``blocks``; true when all of
        /// it went there. When a write falls short, the blocks already there
        /// and the part of this one written are compressed now, and the
        /// block's columns are left for the caller to compress: from then on
        /// blocks are compressed as they fill.
        private func deferBlock() -> Bool {
            if blocks == nil { blocks = IndexSpill(folder: spillFolder, capacity: blocksCapacity) }
            guard let blocks else {
                defers = false
                return false
            }
            let before = blocks.size
            var whole = head.withUnsafeBytes { blocks.append($0) } == head.count
            for index in 0 ..< Self.columnCount where whole {
                whole = blocks.append(block.bytes(column: index)) == block.bytes(column: index).count
            }
            if whole {
                for index in 0 ..< Self.columnCount { block.removeAll(column: index) }
                return true
            }
            // The part of this block that went to the file is compressed with
            // the blocks before it, then dropped from what is left to compress.
            defers = false
            self.blocks = nil
            compressWaiting(blocks)
            var written = blocks.size - before
            let cut = min(written, head.count)
            head.removeFirst(cut)
            written -= cut
            for index in 0 ..< Self.columnCount where written > 0 {
                let cut = min(written, block.bytes(column: index).count)
                block.removeFirst(cut, column: index)
                written -= cut
            }
            return false
        }

        /// Compresses the blocks that waited in `waiting`, read back a piece
        /// at a time; a read that fails is the writer's failure.
        private func compressWaiting(_ waiting: IndexSpill) {
            if !waiting.forEachPiece(size: MemberIndex.spillBound, { compress($0, end: false) }) {
                failure = failure ?? "the member index's blocks could not be read back from their file"
            }
        }

        /// Compresses `source` into the stream; with `end`, ends the frame.
        private func compress(_ source: UnsafeRawBufferPointer, end: Bool) {
            guard let context, failure == nil else { return }
            started = true
            if output.isEmpty { output = [UInt8](repeating: 0, count: Self.outputSize) }
            var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                let (result, produced) = output.withUnsafeMutableBytes { out in
                    var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let result = ZSTD_compressStream2(context, &buffer, &input, end ? ZSTD_e_end : ZSTD_e_continue)
                    return (result, buffer.pos)
                }
                if ZSTD_isError(result) != 0 {
                    failure = "libzstd: " + String(cString: ZSTD_getErrorName(result))
                    return
                }
                compressed += output[0 ..< produced]
                if compressed.count >= spillBound { spillCompressed() }
                if end ? result == 0 : input.pos == input.size && produced < output.count { return }
            }
        }

        /// Moves the compressed bytes held in memory to the spill file.
        private func spillCompressed() {
            guard spills else { return }
            if spill == nil { spill = IndexSpill(folder: spillFolder) }
            guard let spill else {
                spills = false
                return
            }
            let taken = compressed.withUnsafeBytes { spill.append($0) }
            compressed.removeFirst(taken)
            if !compressed.isEmpty { spills = false }
        }

        /// The index's skippable frame: magic, size, `WEIRTARI`, the
        /// version and the counts, then the compressed stream (part of it,
        /// for a large index, in a spill file, read back as it is written out).
        ///
        /// - Throws: ``WeirError`` `.library` when libzstd failed or the
        ///   frame would pass what a skippable frame holds.
        package func frame(endedEarly: Bool, endOffset: Int, contentSize: Int, path: String)
            throws(WeirError) -> IndexFrame {
            flushBlock(end: true)
            if let failure {
                throw WeirError.library(path: path, operation: .writeMemberIndex, failure)
            }
            var head: [UInt8] = []
            head.appendUvarint(2)
            head.appendUvarint(endedEarly ? 1 : 0)
            head.appendUvarint(UInt64(count))
            head.appendUvarint(UInt64(endOffset))
            head.appendUvarint(UInt64(contentSize))
            let spilled = spill?.size ?? 0
            let content = MemberIndex.contentMagic.count + head.count + spilled + compressed.count
            guard content <= MemberIndex.maxFrameContent else {
                throw WeirError.library(path: path, operation: .writeMemberIndex,
                                        "the member index is too large for a skippable frame: \(content) bytes")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8 + content - spilled)
            bytes.append(littleEndian: MemberIndex.skippableMagic)
            bytes.append(littleEndian: UInt32(content))
            bytes += MemberIndex.contentMagic
            bytes += head
            defer { compressed = [] }
            guard let spill, spilled > 0 else { return IndexFrame(head: bytes + compressed, spill: nil, tail: []) }
            return IndexFrame(head: bytes, spill: spill, tail: compressed)
        }
    }
}
