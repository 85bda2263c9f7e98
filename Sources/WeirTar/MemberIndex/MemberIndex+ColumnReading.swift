import Glibc
import WeirSystem

/// Reading version 2 back: the stream decoded, its columns walked as they
/// stand by ``MemberIndex/Records`` (no row is made of them: selecting one
/// member of many makes a value of the members it keeps only), every column
/// checked to hold exactly what its members need.
extension MemberIndex {
    /// The version 2 content `bytes` (what follows `WEIRTARI`) decoded but
    /// not made into rows: its header's counts and its blocks of columns,
    /// which ``Records`` walks in place (``walkColumns(_:declared:endOffset:corrupt:_:)``).
    static func columns(version2 bytes: ArraySlice<UInt8>, corrupt: (String) -> WeirError) throws(WeirError)
        -> (flags: UInt64, count: UInt64, endOffset: Int, contentSize: Int, raw: [UInt8]) {
        let head = try columnsHead(version2: bytes, corrupt: corrupt)
        let raw = try bytes[head.stream...].withUnsafeBytes { stream in Result { () throws(WeirError) in
            try decompressedStream(stream, corrupt: corrupt)
        } }.get()
        return (head.flags, head.count, head.endOffset, head.contentSize, raw)
    }

    /// The header of the version 2 content `bytes`, checked, and where in
    /// `bytes` the zstd stream of its blocks starts.
    static func columnsHead(version2 bytes: ArraySlice<UInt8>, corrupt: (String) -> WeirError) throws(WeirError)
        -> (flags: UInt64, count: UInt64, endOffset: Int, contentSize: Int, stream: Int) {
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
            return (flags, count, Int(endOffset), Int(contentSize), bytes.startIndex + head.position)
        } }.get()
    }

    /// The fewest column bytes a member takes: one for each of its columns
    /// but the device's. A count above the bytes over this is a lie.
    static let leastMemberBytes = 17

    /// Walks the blocks of columns `raw`, handing `body` each member in
    /// turn as a ``Record`` that points into the walk's own path buffer and
    /// into `raw` (its path's kept folders are not rewritten; nothing is
    /// copied but the path's new part). Checks what turning them into rows
    /// and walking those checked: every column holding exactly what its
    /// members need, the offsets in range and within `endOffset`, modes,
    /// and `declared` members in all.
    static func walkColumns(_ raw: UnsafeRawBufferPointer, declared: UInt64, endOffset: Int,
                            corrupt: (String) -> WeirError,
                            _ body: (Record) throws(WeirError) -> Void) throws(WeirError) {
        try walkColumns(declared: declared, endOffset: endOffset, corrupt: corrupt, body) { _ throws(WeirError) in raw }
    }

    /// The most bytes a block's head takes: its member count and 18 column
    /// lengths, a `uvarint` of at most 10 bytes each.
    static let blockHeadBytes = 19 * 10

    /// Walks the blocks of columns that `bytes` gives as ``walkColumns(_:declared:endOffset:corrupt:_:)``
    /// walks them, with the same checks and errors: `bytes(n)` is the record
    /// list from its start, at least `n` bytes of it when it holds that many,
    /// else all of it (a list still being decoded: ``ColumnStream``). Every
    /// check against the list's size asks for the bytes it needs, so that
    /// one made on part of the list finds what it would on the whole.
    static func walkColumns(declared: UInt64, endOffset: Int, corrupt: (String) -> WeirError,
                            _ body: (Record) throws(WeirError) -> Void,
                            bytes: (Int) throws(WeirError) -> UnsafeRawBufferPointer) throws(WeirError) {
        var position = 0
        var total: UInt64 = 0
        var walk = ColumnWalk()
        defer { walk.free() }
        var lengths = [Int](repeating: 0, count: Column.allCases.count)
        // The cursors in memory of their own, not an array: neither checked
        // for uniqueness nor captured by a closure at each of a member's reads.
        let columns = UnsafeMutableBufferPointer<ColumnCursor>.allocate(capacity: Column.allCases.count)
        columns.initialize(repeating: ColumnCursor(bytes: UnsafeRawBufferPointer(start: nil, count: 0)))
        defer { columns.deallocate() }
        /// Whether the list holds at least `count` bytes.
        func holds(_ count: UInt64) throws(WeirError) -> Bool {
            let have = try bytes(Int(clamping: count)).count
            return count <= UInt64(have)
        }
        while try position < bytes(position + 1).count {
            // A head is read whole from what is decoded, never from a part of it that cuts a length short.
            var cursor = ColumnCursor(bytes: try bytes(position + blockHeadBytes))
            cursor.position = position
            guard let members = cursor.uvarint(), members > 0, try holds(members) else {
                throw corrupt("a block of the record list declares no members or more than it holds")
            }
            for column in Column.allCases {
                guard let length = cursor.uvarint(), try holds(length) else {
                    throw corrupt("a column's length runs past the record list")
                }
                lengths[column.rawValue] = Int(length)
            }
            var start = cursor.position
            for column in Column.allCases {
                let length = lengths[column.rawValue]
                let have = try bytes(start + length).count
                guard length <= have - start else {
                    throw corrupt("a column runs past the record list")
                }
                start += length
            }
            let raw = try bytes(start)
            start = cursor.position
            for column in Column.allCases {
                let length = lengths[column.rawValue]
                columns[column.rawValue] = ColumnCursor(
                    bytes: UnsafeRawBufferPointer(rebasing: raw[start ..< start + length]))
                start += length
            }
            position = start
            for _ in 0 ..< members {
                do throws(ColumnFailure) {
                    try walk.next(columns, endOffset: endOffset, index: Int(total))
                } catch {
                    throw corrupt(error.detail)
                }
                total += 1
                try body(walk.record)
            }
            for column in Column.allCases where columns[column.rawValue].position != lengths[column.rawValue] {
                throw corrupt("the \(column) column holds bytes past its members")
            }
        }
        guard total == declared else {
            throw corrupt("it declares \(declared) members, but its columns hold \(total)")
        }
    }

    /// The state of a walk of the columns: the current member's record, its
    /// path in a buffer of the walk's own (the next path keeps a prefix of
    /// it), and where each '/' of that path stands (the folders the next
    /// path may keep). Raw memory, not arrays: written at every member, it
    /// is neither checked for uniqueness nor reference counted.
    private struct ColumnWalk {
        var record = Record()
        var path = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        var pathCapacity = 256
        var slashes = UnsafeMutablePointer<Int>.allocate(capacity: 64)
        var slashCount = 0
        var slashCapacity = 64

        func free() {
            path.deallocate()
            slashes.deallocate()
        }

        /// Room for `count` bytes of path, the first `kept` of them kept.
        @inline(never)
        mutating func growPath(to count: Int, keeping kept: Int) {
            while pathCapacity < count { pathCapacity *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: pathCapacity)
            grown.update(from: path, count: kept)
            path.deallocate()
            path = grown
        }

        /// Appends a slash's position, growing the room for them.
        @inline(__always)
        mutating func appendSlash(_ position: Int) {
            if slashCount == slashCapacity {
                slashCapacity *= 2
                let grown = UnsafeMutablePointer<Int>.allocate(capacity: slashCapacity)
                grown.update(from: slashes, count: slashCount)
                slashes.deallocate()
                slashes = grown
            }
            slashes[slashCount] = position
            slashCount += 1
        }

        /// Replaces the record, the previous member's, by the next one of `columns`.
        ///
        /// Written out read by read, each cursor reached through the buffer at a
        /// constant index: this runs once per member of the archive for every
        /// selection and listing.
        @inline(__always)
        mutating func next(_ columns: UnsafeMutableBufferPointer<ColumnCursor>, endOffset: Int,
                           index: Int) throws(ColumnFailure) {
            func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
            guard let gap = columns[Column.gap.rawValue].uvarint() else { throw ended(.gap) }
            guard let blocks = columns[Column.headerBlocks.rawValue].uvarint() else {
                throw ended(.headerBlocks)
            }
            guard let extraBits = columns[Column.dataExtra.rawValue].uvarint() else { throw ended(.dataExtra) }
            let extra = unzigzag(extraBits)
            guard let size0 = columns[Column.size0.rawValue].byte() else { throw ended(.size0) }
            guard let size1 = columns[Column.size1.rawValue].byte() else { throw ended(.size1) }
            guard let size2 = columns[Column.size2.rawValue].byte() else { throw ended(.size2) }
            guard let high = columns[Column.sizeHigh.rawValue].uvarint() else { throw ended(.sizeHigh) }
            guard high < 1 << 39 else { throw ColumnFailure("a member's size is out of range") }
            let size = UInt64(size0) | UInt64(size1) << 8 | UInt64(size2) << 16 | high << 24
            guard let mtimeBits = columns[Column.mtime.rawValue].uvarint() else { throw ended(.mtime) }
            let mtime = record.mtime &+ unzigzag(mtimeBits)
            guard let type = columns[Column.type.rawValue].byte() else { throw ended(.type) }
            guard let mode = columns[Column.mode.rawValue].uvarint() else { throw ended(.mode) }
            guard let uid = columns[Column.uid.rawValue].uvarint() else { throw ended(.uid) }
            guard let gid = columns[Column.gid.rawValue].uvarint() else { throw ended(.gid) }
            guard blocks < 1 << 40, gap < 1 << 62 else { throw ColumnFailure("a member's offsets are out of range") }
            let headerLength = Int(blocks + 1) * 512
            let dataLength = Int64(predictedData(type: type, size: Int(size))) + extra
            guard dataLength >= 0, dataLength < 1 << 62 else {
                throw ColumnFailure("a member's data length is out of range")
            }
            // The path: the previous one's first `kept` folders, then the rest.
            guard let pop = columns[Column.pathPop.rawValue].uvarint() else { throw ended(.pathPop) }
            guard pop <= UInt64(slashCount) else {
                throw ColumnFailure("a path leaves more folders than the previous has")
            }
            let keep = slashCount - Int(pop)
            let cut = keep == 0 ? 0 : slashes[keep - 1] + 1
            guard let rest = columns[Column.pathRest.rawValue].text() else { throw ended(.pathRest) }
            slashCount = keep
            let restCount = rest.count
            if let base = rest.baseAddress, restCount > 0 {
                if cut + restCount > pathCapacity { growPath(to: cut + restCount, keeping: cut) }
                (path + cut).update(from: base.assumingMemoryBound(to: UInt8.self), count: restCount)
                var from = 0
                while from < restCount,
                      let found = memchr(base + from, Int32(UInt8(ascii: "/")), restCount - from) {
                    let offset = base.distance(to: UnsafeRawPointer(found))
                    appendSlash(cut + offset)
                    from = offset + 1
                }
            }
            record.path = UnsafeRawBufferPointer(start: path, count: cut + restCount)
            record.sharedPrefix = cut
            guard let link = columns[Column.link.rawValue].text() else { throw ended(.link) }
            record.link = link
            try name(columns, .uname, &record.uname)
            try name(columns, .gname, &record.gname)
            var (major, minor): (UInt64, UInt64) = (0, 0)
            if type == UInt8(ascii: "3") || type == UInt8(ascii: "4") {
                guard let first = columns[Column.device.rawValue].uvarint(),
                      let second = columns[Column.device.rawValue].uvarint() else { throw ended(.device) }
                (major, minor) = (first, second)
            }
            // What a row's reader checks of the same member.
            guard uid <= UInt64(Int.max), gid <= UInt64(Int.max), major <= UInt64(Int.max),
                  minor <= UInt64(Int.max) else {
                throw ColumnFailure("member \(index)'s owner or device number is out of range")
            }
            guard mode <= 0o7777 else { throw ColumnFailure("member \(index)'s mode \(mode) is out of range") }
            let (start, o1) = record.end.addingReportingOverflow(Int(gap))
            let (end, o2) = start.addingReportingOverflow(headerLength + Int(dataLength))
            guard !o1, !o2 else { throw ColumnFailure("a member's offsets overflow") }
            guard end <= endOffset else { throw ColumnFailure("member \(index) runs past the end offset \(endOffset)") }
            record.headerOffset = start
            record.headerLength = headerLength
            record.dataLength = Int(dataLength)
            record.size = Int(size)
            record.mode = UInt32(mode)
            record.uid = Int(uid)
            record.gid = Int(gid)
            record.type = type
            record.mtime = mtime
            record.devmajor = Int(major)
            record.devminor = Int(minor)
        }
    }

    /// An owner or group name of `column`: 0 keeps the previous member's,
    /// 1 then a name ended by NUL replaces it.
    @inline(__always)
    private static func name(_ columns: UnsafeMutableBufferPointer<ColumnCursor>, _ column: Column,
                             _ previous: inout UnsafeRawBufferPointer) throws(ColumnFailure) {
        switch columns[column.rawValue].byte() {
        case 0: return
        case 1:
            guard let text = columns[column.rawValue].text() else { throw ended(column) }
            previous = text
        case nil: throw ended(column)
        default: throw ColumnFailure("the \(column) column holds an unknown mark")
        }
    }

    /// The error of `column` ending before its members do.
    @inline(never)
    private static func ended(_ column: Column) -> ColumnFailure {
        ColumnFailure("the \(column) column ends before its members do")
    }

    /// What is wrong with a member's columns: the walk's failure, made into
    /// a ``WeirError`` naming the file by ``walkColumns(_:declared:endOffset:corrupt:_:)``
    /// (the walk of each member takes no closure, nor the file's name).
    private struct ColumnFailure: Error {
        let detail: String

        init(_ detail: String) { self.detail = detail }
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
        @inline(__always)
        mutating func text() -> UnsafeRawBufferPointer? {
            let count = bytes.count
            guard position < count, let base = bytes.baseAddress else { return nil }
            // Empty, the common case of a link target: no search.
            if base.load(fromByteOffset: position, as: UInt8.self) == 0 {
                position += 1
                return UnsafeRawBufferPointer(start: base + position - 1, count: 0)
            }
            guard let found = memchr(base + position, 0, count - position) else { return nil }
            let end = base.distance(to: UnsafeRawPointer(found))
            defer { position = end + 1 }
            return UnsafeRawBufferPointer(rebasing: bytes[position ..< end])
        }
    }
}
