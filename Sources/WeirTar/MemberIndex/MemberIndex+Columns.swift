import CZstd
import WeirFormats
import WeirSystem

/// Version 2 of the record list (docs/members.md, "Its content"): the
/// members in blocks of columns, compressed as they come, in one zstd
/// stream; the counts that are known only at the end stand uncompressed
/// before it.
///
/// Why columns: a member's fields differ in kind (a name, a size, a time,
/// a mode), and zstd finds far more in a run of one kind than in rows that
/// interleave them: on the Linux tarball 6.1 bytes a member where version
/// 1's rows took 9.1, on a 61 MB source tar 7.9 where they took 11.6 (both
/// at level 3; pixz's index of names and offsets: 6.6 and 8.95).
extension MemberIndex {
    /// The columns of a block, in the order they are stored.
    enum Column: Int, CaseIterable {
        /// Header offset minus the previous member's end (`uvarint`).
        case gap
        /// Header blocks minus one (`uvarint`).
        case headerBlocks
        /// Data length minus what the size predicts (`svarint`, see ``predictedData(type:size:)``).
        case dataExtra
        /// The size's three low bytes, one column each, then the rest (`uvarint`).
        case size0, size1, size2, sizeHigh
        /// mtime minus the previous member's (`svarint`).
        case mtime
        /// The type flag (1 byte), then mode, uid, gid (`uvarint`).
        case type, mode, uid, gid
        /// The path: how many of the previous path's folders it leaves
        /// (`uvarint`), then what follows the folders it keeps, ended by NUL.
        case pathPop, pathRest
        /// The link target, ended by NUL.
        case link
        /// Owner, group: 0 for the previous member's, else 1 then the name ended by NUL.
        case uname, gname
        /// A device's major and minor (`uvarint` each; types 3 and 4 only).
        case device
    }

    /// The data length a member of `type` and `size` has in a well-formed
    /// tar (its data rounded to 512): what the data column is coded against.
    static func predictedData(type: UInt8, size: Int) -> Int {
        switch type {
        case UInt8(ascii: "0"), UInt8(ascii: "1"): TarHeader.blocks(size) ?? 0
        default: 0
        }
    }

    /// The level the record list is compressed at for a run at `level`: 3
    /// at the fast levels, where every millisecond of a run counts, up to
    /// 9 where a run spends seconds a gigabyte (and the index is 6% smaller).
    package static func level(forRunLevel level: Int) -> Int { min(max(level, 3), 9) }

    /// Compressed index bytes kept in memory; past it they go to a spill
    /// file (``IndexSpill``): about 170,000 members' worth.
    package static let spillBound = 1 << 20

    /// A member index's skippable frame, ready to write: `head`, then the
    /// spill file's bytes, then `tail`.
    package struct IndexFrame: Sendable {
        package let head: [UInt8]
        package let spill: IndexSpill?
        package let tail: [UInt8]

        package init(head: [UInt8], spill: IndexSpill?, tail: [UInt8]) {
            (self.head, self.spill, self.tail) = (head, spill, tail)
        }

        /// The frame's size in bytes.
        package var count: Int { head.count + (spill?.size ?? 0) + tail.count }

        /// The frame's bytes in pieces of at most `size` (the first and last
        /// may differ), read back from the spill file as they are asked for:
        /// `body` gets each in turn, in order.
        ///
        /// - Throws: ``WeirError`` when the spill file cannot be read back
        ///   (`path` names the output), or what `body` throws.
        package func forEachPiece(size: Int, path: String,
                                  _ body: ([UInt8]) throws(WeirError) -> Void) throws(WeirError) {
            try body(head)
            if let spill {
                var offset = 0
                while offset < spill.size {
                    let count = min(size, spill.size - offset)
                    var ok = false
                    let piece = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                        ok = spill.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
                        initialized = ok ? count : 0
                    }
                    guard ok else {
                        throw WeirError.library(path: path, operation: .writeMemberIndex,
                                                "the member index's spill file could not be read back")
                    }
                    try body(piece)
                    offset += count
                }
            }
            if !tail.isEmpty { try body(tail) }
        }

        /// The whole frame in memory.
        package func bytes(path: String) throws(WeirError) -> [UInt8] {
            var all: [UInt8] = []
            all.reserveCapacity(count)
            try forEachPiece(size: 1 << 20, path: path) { all += $0 }
            return all
        }
    }

    /// Raw column bytes gathered before a block goes to the compressor:
    /// bounds what the writer holds uncompressed, whatever the member count.
    package static let blockBytes = 1 << 20
    /// The compressor's window: a block and the one before it, so names
    /// repeat across blocks, in bounded memory (about 1.5 MiB at level 3).
    static let windowLog: Int32 = 20

    /// Encodes members into version 2 as a scan finds them, compressing
    /// each block of columns as it fills: what it holds is one block of raw
    /// columns, the compressor, and the compressed bytes so far (about 6
    /// bytes a member). Used by one thread at a time.
    package final class ColumnWriter: TarMemberSink {
        private var columns = [[UInt8]](repeating: [], count: Column.allCases.count)
        private var raw = 0
        private var inBlock = 0
        package private(set) var count = 0
        /// A block's raw bytes on their way to the compressor, and what it gives back, reused.
        private var block: [UInt8] = []
        private var output = [UInt8](repeating: 0, count: ColumnWriter.outputSize)
        private static let outputSize = 64 << 10
        /// The stream's compressed bytes so far: those past ``spillBound`` in
        /// ``spill`` (in order), the rest here.
        private var compressed: [UInt8] = []
        private var spill: IndexSpill?
        /// Whether bytes may still go to a spill file (false once one could
        /// not be made or written).
        private var spills = true
        private let context: OpaquePointer?
        private let level: Int
        /// The previous member's end, path, mtime and names, which the next is coded against.
        private var previousEnd = 0
        private var previousPath: [UInt8] = []
        private var previousSlashes = 0
        private var previousMtime: Int64 = 0
        private var previousUname: [UInt8]?
        private var previousGname: [UInt8]?
        /// The first libzstd failure; reported by ``frame(endedEarly:endOffset:contentSize:path:)``.
        private var failure: String?

        /// Compressed bytes kept in memory before the rest go to a spill file.
        private let spillBound: Int
        /// Raw column bytes that close a block (``MemberIndex/blockBytes``).
        private let blockBytes: Int

        /// A writer compressing at `level`, keeping `spillBound` compressed
        /// bytes in memory (``MemberIndex/spillBound``) and closing a block at
        /// `blockBytes` (``MemberIndex/blockBytes``): the tests' are smaller.
        package init(level: Int = 3, spillBound: Int = MemberIndex.spillBound,
                     blockBytes: Int = MemberIndex.blockBytes) {
            self.level = level
            self.spillBound = spillBound
            self.blockBytes = blockBytes
            // Every buffer at its full size at once, never grown: weir's
            // allocator keeps one arena and never hands freed memory back,
            // so buffers that grew as members came were carved out of a chunk
            // buffer freed a moment before, and the next chunk's buffer then
            // took fresh memory (+8 MiB, one chunk, in some runs through a pipe
            // at -1). Untouched capacity costs no memory.
            let members = MemberIndex.blockBytes / 24 + 1
            for column in Column.allCases {
                switch column {
                case .pathRest: columns[column.rawValue].reserveCapacity(MemberIndex.blockBytes + 4096)
                case .size0, .size1, .size2, .type, .uname, .gname: columns[column.rawValue].reserveCapacity(members)
                default: columns[column.rawValue].reserveCapacity(3 * members)
                }
            }
            block.reserveCapacity(2 * MemberIndex.blockBytes)
            compressed.reserveCapacity(spillBound + Self.outputSize)
            context = ZSTD_createCCtx()
            if let context {
                ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level))
                ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
                ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, MemberIndex.windowLog)
            }
        }

        deinit { ZSTD_freeCCtx(context) }

        package func append(_ member: Member) {
            func put(_ column: Column, _ value: UInt64) { columns[column.rawValue].appendUvarint(value) }
            func signed(_ column: Column, _ value: Int64) {
                columns[column.rawValue].appendUvarint(UInt64(bitPattern: value << 1 ^ value >> 63))
            }
            put(.gap, UInt64(max(0, member.headerOffset - previousEnd)))
            put(.headerBlocks, UInt64(max(0, member.headerLength / 512 - 1)))
            let predicted = MemberIndex.predictedData(type: member.type, size: member.size)
            signed(.dataExtra, Int64(member.dataLength - predicted))
            let size = UInt64(max(0, member.size))
            columns[Column.size0.rawValue].append(UInt8(truncatingIfNeeded: size))
            columns[Column.size1.rawValue].append(UInt8(truncatingIfNeeded: size >> 8))
            columns[Column.size2.rawValue].append(UInt8(truncatingIfNeeded: size >> 16))
            put(.sizeHigh, size >> 24)
            signed(.mtime, member.mtime &- previousMtime)
            columns[Column.type.rawValue].append(member.type)
            put(.mode, UInt64(member.mode))
            put(.uid, UInt64(max(0, member.uid)))
            put(.gid, UInt64(max(0, member.gid)))
            appendPath(member.path)
            columns[Column.link.rawValue].append(contentsOf: member.link.prefix { $0 != 0 })
            columns[Column.link.rawValue].append(0)
            Self.appendName(member.uname, after: &previousUname, to: &columns[Column.uname.rawValue])
            Self.appendName(member.gname, after: &previousGname, to: &columns[Column.gname.rawValue])
            if member.type == UInt8(ascii: "3") || member.type == UInt8(ascii: "4") {
                put(.device, UInt64(max(0, member.devmajor)))
                put(.device, UInt64(max(0, member.devminor)))
            }
            previousEnd = member.end
            previousMtime = member.mtime
            count += 1
            inBlock += 1
            raw += member.path.count + 24
            if raw >= blockBytes { flushBlock(end: false) }
        }

        /// The path coded against the previous one by folders: the folders
        /// the two share are kept, the rest written.
        private func appendPath(_ path: [UInt8]) {
            path.withUnsafeBufferPointer { whole in
                let name = UnsafeBufferPointer(rebasing: whole[0 ..< (whole.firstIndex(of: 0) ?? whole.count)])
                var kept = 0, cut = 0, slashes = 0
                previousPath.withUnsafeBufferPointer { previous in
                    var index = 0
                    let limit = min(name.count, previous.count)
                    while index < limit, name[index] == previous[index] {
                        // The folders kept: every '/' of the shared prefix ends one.
                        if name[index] == UInt8(ascii: "/") {
                            kept += 1
                            cut = index + 1
                        }
                        index += 1
                    }
                    slashes = kept
                    while index < name.count {
                        if name[index] == UInt8(ascii: "/") { slashes += 1 }
                        index += 1
                    }
                }
                columns[Column.pathPop.rawValue].appendUvarint(UInt64(previousSlashes - kept))
                columns[Column.pathRest.rawValue].append(contentsOf: UnsafeBufferPointer(rebasing: name[cut...]))
                columns[Column.pathRest.rawValue].append(0)
                previousPath.removeSubrange(cut...)
                previousPath.append(contentsOf: UnsafeBufferPointer(rebasing: name[cut...]))
                previousSlashes = slashes
            }
        }

        private static func appendName(_ name: [UInt8], after previous: inout [UInt8]?, to column: inout [UInt8]) {
            let bytes = name.prefix { $0 != 0 }
            if let previous, previous.elementsEqual(bytes) {
                column.append(0)
                return
            }
            column.append(1)
            column.append(contentsOf: bytes)
            column.append(0)
            previous = Array(bytes)
        }

        /// Sends the block's columns to the compressor (and, with `end`, ends its frame).
        private func flushBlock(end: Bool) {
            block.removeAll(keepingCapacity: true)
            if inBlock > 0 {
                block.appendUvarint(UInt64(inBlock))
                for column in columns { block.appendUvarint(UInt64(column.count)) }
                for index in columns.indices {
                    block += columns[index]
                    columns[index].removeAll(keepingCapacity: true)
                }
            }
            (raw, inBlock) = (0, 0)
            guard let context, failure == nil else {
                if failure == nil { failure = "out of memory" }
                return
            }
            block.withUnsafeBytes { source in
                var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
                while true {
                    let (result, produced) = output.withUnsafeMutableBytes { out in
                        var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                        let result = ZSTD_compressStream2(context, &buffer, &input, end ? ZSTD_e_end : ZSTD_e_continue)
                        return (result, buffer.pos)
                    }
                    if ZSTD_isError(result) != 0 {
                        failure = String(cString: ZSTD_getErrorName(result))
                        return
                    }
                    compressed += output[0 ..< produced]
                    if compressed.count >= spillBound { spillCompressed() }
                    if end ? result == 0 : input.pos == input.size && produced < output.count { return }
                }
            }
        }

        /// Moves the compressed bytes held in memory to the spill file.
        private func spillCompressed() {
            guard spills else { return }
            if spill == nil { spill = IndexSpill() }
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
                throw WeirError.library(path: path, operation: .writeMemberIndex, "libzstd: \(failure)")
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
