import CZstd
import Glibc
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

/// Reading version 2 back: the stream decoded, its columns walked as they
/// stand by ``MemberIndex/Records`` (no row is made of them: selecting one
/// member of many makes a value of the members it keeps only), every column
/// checked to hold exactly what its members need.
extension MemberIndex {
    /// The version 2 content `bytes` (what follows `WEIRTARI`) decoded but
    /// not made into rows: its header's counts and its blocks of columns,
    /// which ``Records`` walks in place (``walkColumns(_:declared:endOffset:names:corrupt:_:)``).
    static func columns(version2 bytes: ArraySlice<UInt8>, corrupt: (String) -> WeirError) throws(WeirError)
        -> (flags: UInt64, count: UInt64, endOffset: Int, contentSize: Int, raw: [UInt8]) {
        try bytes.withUnsafeBytes { whole in Result { () throws(WeirError) in
            var head = ColumnCursor(bytes: UnsafeRawBufferPointer(rebasing: whole[...]))
            func field() throws(WeirError) -> UInt64 {
                guard let value = head.uvarint() else { throw corrupt("the record list's header is cut short") }
                return value
            }
            let (version, flags, count, endOffset, contentSize) = (try field(), try field(), try field(), try field(),
                                                                   try field())
            guard version == 2 else {
                throw corrupt("version \(version) of the record list is not one this weir reads (1 or 2)")
            }
            guard endOffset <= contentSize, contentSize <= UInt64(Int.max) else {
                throw corrupt("the end offset \(endOffset) passes the content size \(contentSize)")
            }
            let stream = UnsafeRawBufferPointer(rebasing: whole[head.position...])
            let raw = try decompressedStream(stream, corrupt: corrupt)
            return (flags, count, Int(endOffset), Int(contentSize), raw)
        } }.get()
    }

    /// The fewest column bytes a member takes: one for each of its columns
    /// but the device's. A count above the bytes over this is a lie.
    static let leastMemberBytes = 17

    /// Walks the blocks of columns `raw`, handing `body` each member in
    /// turn as one ``Member`` updated in place (its path's kept folders are
    /// not rewritten); without `names`, link targets and owner names are
    /// not copied. Checks what turning them into rows and walking those
    /// checked: every column holding exactly what its members need, the
    /// offsets in range and within `endOffset`, modes, and `declared`
    /// members in all.
    static func walkColumns(_ raw: UnsafeRawBufferPointer, declared: UInt64, endOffset: Int, names: Bool,
                            corrupt: (String) -> WeirError,
                            _ body: (Member) throws(WeirError) -> Void) throws(WeirError) {
        var cursor = ColumnCursor(bytes: raw)
        var total: UInt64 = 0
        var member = Member(headerOffset: 0, headerLength: 0, dataLength: 0, size: 0, path: [])
        // Where each '/' of the current path stands: the folders the next path may keep.
        var slashes: [Int] = []
        var lengths = [Int](repeating: 0, count: Column.allCases.count)
        // The cursors in memory of their own, not an array: neither checked
        // for uniqueness nor captured by a closure at each of a member's reads.
        let columns = UnsafeMutableBufferPointer<ColumnCursor>.allocate(capacity: Column.allCases.count)
        columns.initialize(repeating: ColumnCursor(bytes: UnsafeRawBufferPointer(start: nil, count: 0)))
        defer { columns.deallocate() }
        slashes.reserveCapacity(64)
        while cursor.position < raw.count {
            guard let members = cursor.uvarint(), members > 0, members <= UInt64(raw.count) else {
                throw corrupt("a block of the record list declares no members or more than it holds")
            }
            for column in Column.allCases {
                guard let length = cursor.uvarint(), length <= UInt64(raw.count) else {
                    throw corrupt("a column's length runs past the record list")
                }
                lengths[column.rawValue] = Int(length)
            }
            var start = cursor.position
            for column in Column.allCases {
                let length = lengths[column.rawValue]
                guard length <= raw.count - start else { throw corrupt("a column runs past the record list") }
                let bytes = UnsafeRawBufferPointer(rebasing: raw[start ..< start + length])
                columns[column.rawValue] = ColumnCursor(bytes: bytes)
                start += length
            }
            cursor.position = start
            for _ in 0 ..< members {
                try nextFromColumns(&member, columns, &slashes, names: names, endOffset: endOffset,
                                    index: Int(total), corrupt: corrupt)
                total += 1
                try body(member)
            }
            for column in Column.allCases where columns[column.rawValue].position != lengths[column.rawValue] {
                throw corrupt("the \(column) column holds bytes past its members")
            }
        }
        guard total == declared else {
            throw corrupt("it declares \(declared) members, but its columns hold \(total)")
        }
    }

    /// Replaces `member`, the previous member, by the next one of `columns`.
    ///
    /// Written out read by read, each cursor reached through the buffer at a
    /// constant index: this runs once per member of the archive for every
    /// selection and listing.
    @inline(__always)
    private static func nextFromColumns(_ member: inout Member, _ columns: UnsafeMutableBufferPointer<ColumnCursor>,
                                        _ slashes: inout [Int],
                                        names: Bool, endOffset: Int, index: Int,
                                        corrupt: (String) -> WeirError) throws(WeirError) {
        func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
        guard let gap = columns[Column.gap.rawValue].uvarint() else { throw ended(.gap, corrupt) }
        guard let blocks = columns[Column.headerBlocks.rawValue].uvarint() else { throw ended(.headerBlocks, corrupt) }
        guard let extraBits = columns[Column.dataExtra.rawValue].uvarint() else { throw ended(.dataExtra, corrupt) }
        let extra = unzigzag(extraBits)
        guard let size0 = columns[Column.size0.rawValue].byte() else { throw ended(.size0, corrupt) }
        guard let size1 = columns[Column.size1.rawValue].byte() else { throw ended(.size1, corrupt) }
        guard let size2 = columns[Column.size2.rawValue].byte() else { throw ended(.size2, corrupt) }
        guard let high = columns[Column.sizeHigh.rawValue].uvarint() else { throw ended(.sizeHigh, corrupt) }
        guard high < 1 << 39 else { throw corrupt("a member's size is out of range") }
        let size = UInt64(size0) | UInt64(size1) << 8 | UInt64(size2) << 16 | high << 24
        guard let mtimeBits = columns[Column.mtime.rawValue].uvarint() else { throw ended(.mtime, corrupt) }
        let mtime = member.mtime &+ unzigzag(mtimeBits)
        guard let type = columns[Column.type.rawValue].byte() else { throw ended(.type, corrupt) }
        guard let mode = columns[Column.mode.rawValue].uvarint() else { throw ended(.mode, corrupt) }
        guard let uid = columns[Column.uid.rawValue].uvarint() else { throw ended(.uid, corrupt) }
        guard let gid = columns[Column.gid.rawValue].uvarint() else { throw ended(.gid, corrupt) }
        guard blocks < 1 << 40, gap < 1 << 62 else { throw corrupt("a member's offsets are out of range") }
        let headerLength = Int(blocks + 1) * 512
        let dataLength = Int64(predictedData(type: type, size: Int(size))) + extra
        guard dataLength >= 0, dataLength < 1 << 62 else { throw corrupt("a member's data length is out of range") }
        // The path: the previous one's first `kept` folders, then the rest.
        guard let pop = columns[Column.pathPop.rawValue].uvarint() else { throw ended(.pathPop, corrupt) }
        guard pop <= UInt64(slashes.count) else { throw corrupt("a path leaves more folders than the previous has") }
        let keep = slashes.count - Int(pop)
        let cut = keep == 0 ? 0 : slashes[keep - 1] + 1
        guard let rest = columns[Column.pathRest.rawValue].text() else { throw ended(.pathRest, corrupt) }
        if pop > 0 { slashes.removeLast(Int(pop)) }
        let restBytes = UnsafeBufferPointer(start: rest.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                            count: rest.count)
        if let base = restBytes.baseAddress {
            var from = 0
            while from < restBytes.count,
                  let found = memchr(base + from, Int32(UInt8(ascii: "/")), restBytes.count - from) {
                let offset = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                slashes.append(cut + offset)
                from = offset + 1
            }
        }
        if !(cut == member.path.count && rest.isEmpty) {
            if cut < member.path.count { member.path.removeSubrange(cut...) }
            member.path.append(contentsOf: restBytes)
        }
        guard let link = columns[Column.link.rawValue].text() else { throw ended(.link, corrupt) }
        if names, !(link.isEmpty && member.link.isEmpty) { member.link = Array(link) }
        try name(columns, .uname, &member.uname, names: names, corrupt)
        try name(columns, .gname, &member.gname, names: names, corrupt)
        var (major, minor): (UInt64, UInt64) = (0, 0)
        if type == UInt8(ascii: "3") || type == UInt8(ascii: "4") {
            guard let first = columns[Column.device.rawValue].uvarint(),
                  let second = columns[Column.device.rawValue].uvarint() else { throw ended(.device, corrupt) }
            (major, minor) = (first, second)
        }
        // What a row's reader checks of the same member.
        guard uid <= UInt64(Int.max), gid <= UInt64(Int.max), major <= UInt64(Int.max), minor <= UInt64(Int.max) else {
            throw corrupt("member \(index)'s owner or device number is out of range")
        }
        guard mode <= 0o7777 else { throw corrupt("member \(index)'s mode \(mode) is out of range") }
        let (start, o1) = member.end.addingReportingOverflow(Int(gap))
        let (end, o2) = start.addingReportingOverflow(headerLength + Int(dataLength))
        guard !o1, !o2 else { throw corrupt("a member's offsets overflow") }
        guard end <= endOffset else { throw corrupt("member \(index) runs past the end offset \(endOffset)") }
        member.headerOffset = start
        member.headerLength = headerLength
        member.dataLength = Int(dataLength)
        member.size = Int(size)
        member.mode = UInt32(mode)
        member.uid = Int(uid)
        member.gid = Int(gid)
        member.type = type
        member.mtime = mtime
        member.devmajor = Int(major)
        member.devminor = Int(minor)
    }

    /// An owner or group name of `column`: 0 keeps the previous member's,
    /// 1 then a name ended by NUL replaces it (copied only with `names`).
    @inline(__always)
    private static func name(_ columns: UnsafeMutableBufferPointer<ColumnCursor>, _ column: Column,
                             _ previous: inout [UInt8], names: Bool,
                             _ corrupt: (String) -> WeirError) throws(WeirError) {
        switch columns[column.rawValue].byte() {
        case 0: return
        case 1:
            guard let text = columns[column.rawValue].text() else { throw ended(column, corrupt) }
            if names { previous = Array(text) }
        case nil: throw ended(column, corrupt)
        default: throw corrupt("the \(column) column holds an unknown mark")
        }
    }

    /// The error of `column` ending before its members do.
    @inline(never)
    private static func ended(_ column: Column, _ corrupt: (String) -> WeirError) -> WeirError {
        corrupt("the \(column) column ends before its members do")
    }

    /// The one zstd frame `source` must be, exactly, with its checksum;
    /// never more than it could hold.
    static func decompressedStream(_ source: UnsafeRawBufferPointer, corrupt: (String) -> WeirError)
        throws(WeirError) -> [UInt8] {
        guard let header = FrameHeader(startOf: source) else { throw corrupt("the record list is not a zstd frame") }
        guard header.hasChecksum else { throw corrupt("the record list's zstd frame lacks its checksum") }
        let length = ZSTD_findFrameCompressedSize(source.baseAddress, source.count)
        guard ZSTD_isError(length) == 0, length == source.count else {
            throw corrupt(ZSTD_isError(length) != 0 ? "the record list's zstd frame is cut short"
                                                    : "\(source.count - length) bytes follow the record list")
        }
        guard let context = ZSTD_createDCtx() else { throw corrupt("out of memory") }
        defer { ZSTD_freeDCtx(context) }
        let limit = source.count * maxExpansion
        var content: [UInt8] = []
        var output = [UInt8](repeating: 0, count: 128 << 10)
        var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
        while true {
            let (result, produced) = output.withUnsafeMutableBytes { out in
                var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                let result = ZSTD_decompressStream(context, &buffer, &input)
                return (result, buffer.pos)
            }
            if ZSTD_isError(result) != 0 {
                throw corrupt("the record list does not decode: " + String(cString: ZSTD_getErrorName(result)))
            }
            content += output[0 ..< produced]
            guard content.count <= limit else { throw corrupt("the record list decodes to more than it can hold") }
            if result == 0 { return content }
            if input.pos == input.size, produced < output.count {
                throw corrupt("the record list's zstd frame is cut short")
            }
        }
    }

    /// A read position in a column; nil past its end.
    struct ColumnCursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        @inline(__always)
        mutating func uvarint() -> UInt64? {
            // One byte, the common case (a value under 128).
            if position < bytes.count, bytes[position] & 0x80 == 0 {
                position += 1
                return UInt64(bytes[position - 1])
            }
            var value: UInt64 = 0, shift: UInt64 = 0
            while position < bytes.count {
                let byte = bytes[position]
                guard shift < 63 || shift == 63 && byte <= 1 else { return nil }
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        @inline(__always)
        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            position += 1
            return bytes[position - 1]
        }

        /// Bytes up to the next NUL, which is stepped over.
        mutating func text() -> UnsafeRawBufferPointer? {
            guard position < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + position, 0, bytes.count - position) else { return nil }
            let end = base.distance(to: UnsafeRawPointer(found))
            defer { position = end + 1 }
            return UnsafeRawBufferPointer(rebasing: bytes[position ..< end])
        }
    }
}
