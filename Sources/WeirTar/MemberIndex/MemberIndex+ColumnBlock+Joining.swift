import Glibc

extension MemberIndex.ColumnBlock {
    typealias Column = MemberIndex.Column

    /// Where a join stands in a chunk's block: the next member to copy,
    /// and each column's offset (the raws' last), at that member (``at``):
    /// the columns the first member is coded again in (``appendFirst(of:cursor:)``)
    /// stand past it then.
    struct Cursor {
        var member = 0
        var offsets = [Int](repeating: 0, count: MemberIndex.ColumnBlock.columnCount + 1)
        /// The member each column's offset stands at.
        var at = [Int](repeating: 0, count: MemberIndex.ColumnBlock.columnCount + 1)
        /// The raw bytes of the members before ``member``.
        var raw = 0
    }

    /// Codes `part`'s first member into this block, in the columns coded
    /// against the member before (gap, mtime, path, owners), against this block's last
    /// member: read back from `part`, where it was coded against nothing
    /// (an end of 0, an mtime of 0, no folders, no owner), so its columns
    /// hold its own header offset, mtime, path and owners. `cursor` then
    /// stands past it in those columns.
    func appendFirst(of part: MemberIndex.ColumnBlock, cursor: inout Cursor) {
        let source = part.columns
        let (headerOffset, gapEnd) = Self.uvarint(source[Column.gap.rawValue].bytes, at: 0)
        let (zigzag, mtimeEnd) = Self.uvarint(source[Column.mtime.rawValue].bytes, at: 0)
        let mtime = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        let popEnd = Self.uvarint(source[Column.pathPop.rawValue].bytes, at: 0).end
        let path = Self.name(source[Column.pathRest.rawValue].bytes, at: 0)
        // An owner coded against none: 1, the name, NUL.
        let uname = Self.name(source[Column.uname.rawValue].bytes, at: 1)
        let gname = Self.name(source[Column.gname.rawValue].bytes, at: 1)
        let gap = max(0, Int(truncatingIfNeeded: headerOffset) - state.pointee.previousEnd)
        columns[Column.gap.rawValue].appendUvarint(UInt64(gap))
        let delta = mtime &- state.pointee.previousMtime
        columns[Column.mtime.rawValue].appendUvarint(UInt64(bitPattern: delta << 1 ^ delta >> 63))
        appendPath(path)
        appendNames(uname: uname, gname: gname)
        for (column, end) in [(Column.gap, gapEnd), (.mtime, mtimeEnd), (.pathPop, popEnd), (.pathRest, path.count + 1),
                              (.uname, uname.count + 2), (.gname, gname.count + 2)] {
            (cursor.offsets[column.rawValue], cursor.at[column.rawValue]) = (end, 1)
        }
    }

    /// How many of `part`'s members from the cursor's on this block takes
    /// before its raw bytes reach `blockBytes` (the member that reaches
    /// them included: the block closes after it), and their raw bytes.
    func membersFitting(_ part: MemberIndex.ColumnBlock, cursor: Cursor, blockBytes: Int) -> (count: Int, raw: Int) {
        let room = blockBytes - raw
        let left = part.raw - cursor.raw
        if left < room { return (part.count - cursor.member, left) }
        let raws = part.columns[Self.columnCount].bytes
        var (offset, taken, count) = (cursor.offsets[Self.columnCount], 0, 0)
        while count < part.count - cursor.member {
            let (value, next) = Self.uvarint(raws, at: offset)
            (offset, taken, count) = (next, taken + Int(value), count + 1)
            if taken >= room { break }
        }
        return (count, taken)
    }

    /// Copies `count` of `part`'s members from the cursor's on, `raw`
    /// raw bytes (``membersFitting(_:cursor:blockBytes:)``), column by
    /// column, and moves the cursor past them.
    func copy(_ count: Int, raw: Int, of part: MemberIndex.ColumnBlock, cursor: inout Cursor) {
        let end = cursor.member + count
        let whole = end == part.count
        for index in 0 ... Self.columnCount {
            let bytes = part.columns[index].bytes
            let from = cursor.offsets[index]
            let to = whole ? bytes.count : Self.skip(index, bytes, from: from, values: end - cursor.at[index],
                                                     types: part.columns[Column.type.rawValue].bytes,
                                                     firstMember: cursor.at[index])
            if index < Self.columnCount {
                columns[index].append(UnsafeRawBufferPointer(rebasing: bytes[from ..< to]))
            }
            (cursor.offsets[index], cursor.at[index]) = (to, end)
        }
        (cursor.member, cursor.raw) = (end, cursor.raw + raw)
        state.pointee.count += count
        state.pointee.total += count
        state.pointee.raw += raw
    }

    /// Becomes, as what the next member is coded against, `part`'s last
    /// member (all of `part` was copied).
    func takeState(of part: MemberIndex.ColumnBlock) {
        let from = part.state.pointee
        state.pointee.previousEnd = from.previousEnd
        state.pointee.previousPath.set(from.previousPath.bytes)
        state.pointee.previousFolders = from.previousFolders
        state.pointee.previousMtime = from.previousMtime
        state.pointee.previousUname.set(from.previousUname.bytes)
        state.pointee.previousGname.set(from.previousGname.bytes)
        state.pointee.previousUnameLength = from.previousUnameLength
        state.pointee.previousGnameLength = from.previousGnameLength
        state.pointee.hasPreviousNames = from.hasPreviousNames
    }

    /// Where the `values` values of column `index` (the raws past the
    /// columns) that follow offset `from` of `bytes` end, the first the
    /// value of member `firstMember`; `types` is the type column (a device
    /// column holds two values for each device member).
    private static func skip(_ index: Int, _ bytes: UnsafeRawBufferPointer, from: Int, values: Int,
                             types: UnsafeRawBufferPointer, firstMember: Int) -> Int {
        var offset = from
        switch index == columnCount ? nil : Column(rawValue: index) {
        case .size0, .size1, .size2, .type:
            return from + values
        case .pathRest, .link:
            for _ in 0 ..< values { offset = name(bytes, at: offset).count + offset + 1 }
        case .uname, .gname:
            for _ in 0 ..< values {
                offset = bytes[offset] == 0 ? offset + 1 : name(bytes, at: offset + 1).count + offset + 2
            }
        case .device:
            let devices = types[firstMember ..< firstMember + values].reduce(0) {
                $0 + ($1 == UInt8(ascii: "3") || $1 == UInt8(ascii: "4") ? 1 : 0)
            }
            for _ in 0 ..< 2 * devices { offset = uvarint(bytes, at: offset).end }
        default:
            for _ in 0 ..< values { offset = uvarint(bytes, at: offset).end }
        }
        return offset
    }

    /// The uvarint at `offset` of `bytes`, and where it ends (written by this block: whole).
    @inline(__always)
    static func uvarint(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (value: UInt64, end: Int) {
        var (value, shift, at) = (UInt64(0), UInt64(0), offset)
        while true {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, at) }
            shift += 7
        }
    }

    /// The name at `offset` of `bytes`, up to its NUL (written by this block: there is one).
    static func name(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let base = rest.baseAddress, let nul = memchr(base, 0, rest.count) else { return rest }
        return UnsafeRawBufferPointer(start: base, count: UnsafeRawPointer(nul) - base)
    }
}
