import Glibc

/// One tar header block read as GNU tar and libarchive read it: the 512
/// bytes of a ustar, GNU or v7 header (docs/members.md, "How the writer
/// finds members").
///
/// A pure reading of the fields; what a sequence of blocks means (a pax
/// `x` record or a GNU `L`/`K` long name before a member, GNU sparse
/// extension blocks after it) is ``TarWalk``'s. Both the writer's scan
/// and the reader's check of a member (`weir -d --member`, `-t`) read
/// headers through it, so they agree on every field.
///
/// Layout (POSIX.1-1988 ustar; GNU's differences after `gname`):
///
///     0 name[100]   100 mode[8]   108 uid[8]   116 gid[8]   124 size[12]
///     136 mtime[12] 148 chksum[8] 156 typeflag 157 linkname[100]
///     257 magic[6]  263 version[2] 265 uname[32] 297 gname[32]
///     329 devmajor[8] 337 devminor[8] 345 prefix[155] (POSIX)
///     GNU: 386 sparse[4] (offset[12], numbytes[12]), 482 isextended,
///          483 realsize[12]
///
/// Numbers are octal text ended by a space or NUL, or, past what octal
/// holds, base-256 (the first byte's high bit set; 0xFF: negative).
package struct TarHeader {
    /// The block, held by the caller while the header is read.
    package let block: UnsafeRawBufferPointer

    /// The header in `block`, its first 512 bytes.
    package init(_ block: UnsafeRawBufferPointer) {
        precondition(block.count >= 512, "a tar header is a 512-byte block")
        self.block = block
    }

    /// Every byte zero: one of the two blocks that end an archive.
    package var isZero: Bool {
        // Eight bytes at a time: a header is checked once per member.
        var index = 0
        while index < 512 {
            if block.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
        }
        return true
    }

    /// The stored checksum matches the block's bytes, summed unsigned (as
    /// POSIX says) or signed (as some old tars wrote), its own field
    /// counted as spaces.
    package var checksumIsValid: Bool {
        guard let stored = number(148, 8), stored >= 0 else { return false }
        // The unsigned sum (once per member: the walk's largest cost)
        // sixteen bytes at a time into 16-bit lanes: each lane adds at most
        // 32 bytes of 255, 8,160, far below its 65,535, so none overflows.
        var lanes = SIMD16<UInt16>()
        var index = 0
        while index < 512 {
            lanes &+= SIMD16<UInt16>(truncatingIfNeeded: block.loadUnaligned(fromByteOffset: index,
                                                                            as: SIMD16<UInt8>.self))
            index += 16
        }
        // The field's own eight bytes then count as spaces (0x20 each).
        let field = block.loadUnaligned(fromByteOffset: 148, as: UInt64.self)
        // The lanes folded in halves, still 16 bits: 8 of at most 16,320,
        // 4 of 32,640, 2 of 65,280; the last two added as Ints (the whole
        // block's sum passes 16 bits). No generic reduction call.
        let eight = lanes.lowHalf &+ lanes.highHalf
        let four = eight.lowHalf &+ eight.highHalf
        let two = four.lowHalf &+ four.highHalf
        let unsigned = Int(two[0]) + Int(two[1]) + 8 * 0x20 - Self.byteSum(field)
        if stored == unsigned { return true }
        var signed = 0
        for index in 0 ..< 512 {
            signed += index >= 148 && index < 156 ? 0x20 : Int(Int8(bitPattern: block[index]))
        }
        return stored == signed
    }

    /// The type flag (`0` file, `5` folder, `x` pax record, `L` GNU long name…).
    package var typeflag: UInt8 { block[156] }

    /// The magic at 257 is POSIX's `ustar\0` (ustar, pax; GNU tar writes `ustar `).
    package var isPOSIX: Bool { hasMagic(0) }

    /// `ustar` at 257, then `last`.
    private func hasMagic(_ last: UInt8) -> Bool {
        block.loadUnaligned(fromByteOffset: 257, as: UInt32.self) == UInt32(littleEndian: 0x6174_7375)  // "usta"
            && block[261] == UInt8(ascii: "r") && block[262] == last
    }

    /// The name: POSIX's prefix and name joined by `/`, else the name.
    package var path: [UInt8] {
        let name = text(0, 100)
        guard isPOSIX else { return Array(name) }
        let prefix = text(345, 155)
        return prefix.isEmpty ? Array(name) : Array(prefix) + [UInt8(ascii: "/")] + Array(name)
    }

    package var mode: UInt32 { UInt32(truncatingIfNeeded: max(0, number(100, 8) ?? 0)) & 0o7777 }
    package var uid: Int { max(0, number(108, 8) ?? 0) }
    package var gid: Int { max(0, number(116, 8) ?? 0) }
    /// The size field: bytes of data stored after the header (nil: not a number).
    package var size: Int? { number(124, 12).flatMap { $0 >= 0 ? $0 : nil } }
    package var mtime: Int64 { Int64(number(136, 12) ?? 0) }
    package var devmajor: Int { max(0, number(329, 8) ?? 0) }
    package var devminor: Int { max(0, number(337, 8) ?? 0) }
    /// GNU sparse (`S`): the file's real size, and whether extension blocks follow.
    package var gnuRealSize: Int { max(0, number(483, 12) ?? 0) }
    /// Whether the size field (or an old GNU sparse header's real size)
    /// begins with a NUL that more bytes follow: GNU tar skips one such NUL
    /// and reads the digits after it, libarchive and python read 0, so tars
    /// disagree on where the next header is (``readOtherwise``).
    package var sizeReadOtherwise: Bool {
        func nulFirst(_ offset: Int) -> Bool {
            block[offset] == 0 && block[(offset + 1) ..< (offset + 12)].contains { $0 != 0 }
        }
        return nulFirst(124) || (typeflag == UInt8(ascii: "S") && nulFirst(483))
    }
    package var gnuSparseExtended: Bool { block[482] != 0 }

    /// The bytes of field `offset ..< offset + length`.
    package func field(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: block[offset ..< offset + length])
    }

    /// A text field up to its first NUL.
    package func text(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer {
        guard let base = block.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let start = base + offset
        let end = memchr(start, 0, length).map { UnsafeRawPointer($0) - UnsafeRawPointer(start) } ?? length
        return UnsafeRawBufferPointer(start: start, count: end)
    }

    /// A numeric field: octal text (leading spaces, ended by a space or a
    /// NUL; empty is 0) or base-256; nil when it is neither.
    ///
    /// In line where a field is read, for the usual shape (``usualOctal(_:length:)``):
    /// six fields a member, each a call of its own cost 80 instructions (issue 82).
    @inline(__always)
    package func number(_ offset: Int, _ length: Int) -> Int? {
        let field = field(offset, length)
        if length == 8 || length == 12, let base = field.baseAddress,
           let value = Self.usualOctal(base, length: length) {
            return value
        }
        return Self.number(field)
    }

    /// A numeric field's value (as ``number(_:_:)``).
    package static func number(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let first = bytes.first else { return 0 }
        if bytes.count == 8 || bytes.count == 12, let base = bytes.baseAddress,
           let value = usualOctal(base, length: bytes.count) {
            return value
        }
        if first & 0x80 == 0, let value = octalWords(bytes) { return value }
        if first & 0x80 != 0 {
            // Base-256, two's complement, big-endian; what does not fit an Int is refused.
            let negative = first == 0xFF
            var value = negative ? -1 : Int(first & 0x7F)
            for byte in bytes.dropFirst() {
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 256)
                guard !overflow else { return nil }
                value = shifted | Int(byte)
            }
            return value
        }
        var index = 0
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
        var value = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0 || byte == 0x20 { break }
            guard byte >= 0x30, byte <= 0x37, value <= Int.max >> 3 else { return nil }
            value = value << 3 | Int(byte - 0x30)
            index += 1
        }
        return value
    }

    /// The sum of `word`'s eight bytes.
    @inline(__always)
    private static func byteSum(_ word: UInt64) -> Int {
        let pairs = (word & 0x00FF_00FF_00FF_00FF) &+ (word >> 8 & 0x00FF_00FF_00FF_00FF)
        return Int(truncatingIfNeeded: (pairs &* 0x0001_0001_0001_0001) >> 48)
    }

    /// The value of the octal field of `length` bytes (8 or 12) at `base`
    /// when it has the usual shape, that GNU tar, git, bsdtar and Python's
    /// tarfile write: digits from its first byte on, then a NUL or a space,
    /// or the field's end. Nil for any other (leading spaces, no digits, a
    /// byte that refuses it, base-256): ``number(_:)`` then reads it whole.
    @inline(__always)
    private static func usualOctal(_ base: UnsafeRawPointer, length: Int) -> Int? {
        // Both loads lie inside the field: 8 bytes at 0, and 4 at 8 only when it holds 12.
        let first = UInt64(littleEndian: base.loadUnaligned(as: UInt64.self))
        let notDigits = ~OctalWord.digits(first) & OctalWord.high
        guard notDigits & 0x80 == 0 else { return nil }
        // The first byte that is not a digit: 1 to 7, or 8 for none.
        let end = notDigits.trailingZeroBitCount >> 3
        if end < 8 {
            guard OctalWord.ends(first &>> (8 * end) & 0xFF) else { return nil }
            // The digits moved up to the top bytes, what follows them dropped.
            return OctalWord.join(first &<< (64 - 8 * end))
        }
        guard length == 12 else { return OctalWord.join(first) }
        // Eight digits: they may go on in the last four bytes (0 to 4 more).
        let last = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let more = min(4, (~OctalWord.digits(last) & 0x8080_8080).trailingZeroBitCount >> 3)
        guard more == 4 || OctalWord.ends(last &>> (8 * more) & 0xFF) else { return nil }
        let tail = more == 0 ? 0 : OctalWord.join(last &<< (64 - 8 * more))
        return OctalWord.join(first) &<< (3 * more) | tail
    }

    /// ``number(_:)`` of an octal field of 8 or 12 bytes (all a header's
    /// numbers but the sparse map's, read for every member), a word at a
    /// time: `.some(value)` exactly where the digit-by-digit loop gives it,
    /// `.some(nil)` where that loop refuses the field, nil where the word
    /// reading does not decide (a 12-byte field whose first 8 bytes are all
    /// spaces, any other length) and the loop must read it. No overflow is
    /// possible here: 12 octal digits are 36 bits.
    ///
    /// Each byte of a word is classed at once: `zeroBytes` sets a byte's
    /// high bit exactly where the byte is 0 (no borrow crosses bytes: each
    /// low seven bits plus 0x7F stays below 0x100).
    @inline(__always)
    private static func octalWords(_ bytes: UnsafeRawBufferPointer) -> Int?? {
        guard bytes.count == 8 || bytes.count == 12 else { return nil }
        // Both loads lie inside `bytes`: 8 bytes at 0, and 4 at 8 only when it holds 12.
        let first = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let word = OctalWord(first, width: 8)
        guard word.start < 8 else {
            // All spaces: the value 0, unless more bytes follow.
            return bytes.count == 8 ? .some(0) : nil
        }
        guard word.end == 8, bytes.count == 12 else {
            // The digits end inside the word: the byte after them must end the field.
            return word.endsWell ? .some(word.value) : .some(nil)
        }
        // Twelve bytes whose first eight end in digits: they go on in the last four.
        let last = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let more = OctalWord(last, width: 4, leadingSpaces: false)
        guard more.endsWell else { return .some(nil) }
        // At most 4 more digits: the shift is below 64.
        return .some(word.value &<< (3 * more.end) | more.value)
    }

    /// Bytes of data a member of type `type` with size field `size` stores
    /// after its headers, as libarchive and GNU tar skip them: links (but
    /// a hard link carrying data, which pax allows), devices, folders and
    /// FIFOs store none whatever their size field says.
    package static func storedData(type: UInt8, size: Int) -> Int {
        switch type {
        case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "5"), UInt8(ascii: "6"): 0
        default: size
        }
    }

    /// The name the blocks before a member's own header give it, as GNU
    /// tar and libarchive read them: a pax name (`GNU.sparse.name`, else
    /// `path`) over a GNU long name (`L`), in either order; nil for
    /// the header's own. The index writer (``TarWalk``) and the reader's
    /// check (``TarHeaderCheck``) both ask it, so they cannot disagree.
    package static func extendedName(pax: [UInt8]?, longName: [UInt8]?) -> [UInt8]? {
        pax ?? longName
    }

    /// The type the member index records for a member whose own header's
    /// type flag is `raw` and whose name is `path`, as GNU tar reads it: a
    /// v7 file (`\0`), a contiguous one (`7`) or a multi-volume piece (`M`)
    /// is a file (`0`); GNU's dump folder (`D`) a folder (`5`), as is any
    /// of those whose name ends with `/`; a type tar does not know, a file. The
    /// walk that makes the index (``TarWalk``) and the check of a record
    /// against its header blocks (``MemberRecordCheck``) both ask it.
    package static func indexedType(_ raw: UInt8, path: some BidirectionalCollection<UInt8>) -> UInt8 {
        switch raw {
        case UInt8(ascii: "D"): UInt8(ascii: "5")
        case UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"),
             UInt8(ascii: "5"), UInt8(ascii: "6"), UInt8(ascii: "S"): raw
        // What tar makes a file (`0`, NUL, `7`, `M`, a type it does not know) is a folder when its
        // name ends in a slash, as GNU tar and libarchive make it.
        default: path.last == UInt8(ascii: "/") ? UInt8(ascii: "5") : UInt8(ascii: "0")
        }
    }

    /// Why a member of type `raw` whose indexed type is `indexed`
    /// (``indexedType(_:path:)``) and which stores `stored` bytes is read
    /// otherwise by different tars; nil when it is not. A file's type (`0`,
    /// NUL, `7`, …) with a folder's name (a trailing slash) and data: GNU
    /// tar makes a folder and reads what follows its header as the next
    /// headers, others skip the data as a file's. A hard link with data:
    /// GNU tar and python's tarfile store none for it, libarchive does in a
    /// pax archive. The writer's walk ends there (no index is written) and
    /// the reader's check refuses such a record.
    package static func readOtherwise(raw: UInt8, indexed: UInt8, stored: Int) -> String? {
        guard stored > 0 else { return nil }
        if indexed == UInt8(ascii: "5"), raw != UInt8(ascii: "5"), raw != UInt8(ascii: "D") {
            return "a file's type, a folder's name and \(stored) bytes of data"
        }
        if raw == UInt8(ascii: "1") { return "a hard link with \(stored) bytes of data" }
        return nil
    }

    /// The size the member index records for a member of indexed `type`
    /// (``indexedType(_:path:)``) storing `stored` bytes of data: none for a
    /// symbolic link, a device, a folder or a FIFO; a sparse member's real
    /// size (pax `GNU.sparse.realsize` or `.size`, else GNU's `S` header's);
    /// else what it stores.
    package static func indexedSize(type: UInt8, stored: Int, sparseRealSize: Int?, gnuRealSize: Int) -> Int {
        switch type {
        case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "5"), UInt8(ascii: "6"): 0
        case UInt8(ascii: "S"): sparseRealSize ?? gnuRealSize
        default: sparseRealSize ?? stored
        }
    }

    /// `count` rounded up to whole 512-byte blocks (nil when that overflows).
    package static func blocks(_ count: Int) -> Int? {
        let (sum, overflow) = count.addingReportingOverflow(511)
        return overflow ? nil : sum & ~511
    }
}

/// The keys of a pax extended header (`x`) that change what the index
/// records, read from its records (`LEN KEY=VALUE\n`).
package struct PaxRecords {
    package var path: [UInt8]?
    package var linkpath: [UInt8]?
    package var size: Int?
    package var uid: Int?
    package var gid: Int?
    package var uname: [UInt8]?
    package var gname: [UInt8]?
    package var mtime: Int64?
    /// GNU's pax sparse formats: the real name and size (0.1 and 1.0).
    package var sparseName: [UInt8]?
    package var sparseRealSize: Int?
    /// Whether a record did not read as `LEN KEY=VALUE\n` (NUL padding
    /// after the last one aside): the tars then disagree on the rest (GNU
    /// tar skips blanks around the length, libarchive and python stop), so
    /// the walk writes no index and the check refuses it.
    package var malformed = false

    package init() {}

    /// Whether any field the index records is set: in a pax global header
    /// (`g`), which GNU tar applies to every later member, that makes the
    /// members other than their own headers say (a global `path` names them
    /// all alike, a global `size` empties them). The writer's walk ends at
    /// such a header (no index) and the reader's check refuses one. A
    /// `comment` (`git archive`'s commit) or any other key changes nothing.
    package var setsIndexedField: Bool {
        path != nil || linkpath != nil || size != nil || uid != nil || gid != nil || uname != nil || gname != nil
            || mtime != nil || sparseName != nil || sparseRealSize != nil
    }

    /// The records in `data`; a malformed record ends the reading, as
    /// libarchive ignores what it cannot parse (the member is still listed).
    package init(_ data: UnsafeRawBufferPointer) {
        var position = 0
        while position < data.count {
            // "LEN KEY=VALUE\n": LEN counts the whole record, its own digits included.
            var length = 0, index = position
            while index < data.count, data[index] >= 0x30, data[index] <= 0x39, length < 1 << 40 {
                length = length * 10 + Int(data[index] - 0x30)
                index += 1
            }
            guard index < data.count, data[index] == 0x20, length > index - position + 1,
                  length <= data.count - position, data[position + length - 1] == 0x0A else {
                malformed = data[position...].contains { $0 != 0 }
                return
            }
            let record = UnsafeRawBufferPointer(rebasing: data[(index + 1) ..< (position + length - 1)])
            // A blank before the key: GNU tar skips it (the key is then `path`), libarchive keeps it.
            if let first = record.first, first == 0x20 || first == 0x09 {
                malformed = true
                return
            }
            if let equals = record.firstIndex(of: UInt8(ascii: "=")) {
                apply(key: UnsafeRawBufferPointer(rebasing: record[..<equals]),
                      value: UnsafeRawBufferPointer(rebasing: record[(equals + 1)...]))
            }
            position += length
        }
    }

    private mutating func apply(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        func equals(_ name: StaticString) -> Bool {
            key.count == name.utf8CodeUnitCount
                && key.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        }
        if equals("path") { path = Array(value) }
        else if equals("linkpath") { linkpath = Array(value) }
        // A size or an id that is not a plain decimal ("+1024", " 1024", none): GNU tar ignores
        // the record, python reads some of them: tars disagree on where the next header is.
        else if equals("size") { size = number(value) }
        else if equals("uid") { uid = number(value) }
        else if equals("gid") { gid = number(value) }
        else if equals("uname") { uname = Array(value) }
        else if equals("gname") { gname = Array(value) }
        else if equals("mtime") { mtime = Self.seconds(value) }
        else if equals("GNU.sparse.name") { sparseName = Array(value) }
        else if equals("GNU.sparse.realsize") || equals("GNU.sparse.size") {
            sparseRealSize = number(value)
        }
    }

    /// `value` as a plain decimal; nil, and the records marked malformed, when it is not one.
    private mutating func number(_ value: UnsafeRawBufferPointer) -> Int? {
        guard let found = Self.decimal(value) else {
            malformed = true
            return nil
        }
        return Int(found)
    }

    /// A non-negative decimal that fits an Int.
    static func decimal(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard !value.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in value {
            guard byte >= 0x30, byte <= 0x39, result <= (Int64.max - 9) / 10 else { return nil }
            result = result * 10 + Int64(byte - 0x30)
        }
        return result
    }

    /// A pax time's whole seconds (`-12.5` → -12, as libarchive keeps them).
    static func seconds(_ value: UnsafeRawBufferPointer) -> Int64? {
        var digits = value[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        if let dot = digits.firstIndex(of: UInt8(ascii: ".")) { digits = digits[..<dot] }
        guard let whole = decimal(UnsafeRawBufferPointer(rebasing: digits)) else { return nil }
        return negative ? -whole : whole
    }
}

/// One word (up to 8 bytes, the first in the low byte) of an octal field,
/// read as ``TarHeader/number(_:)``'s loop reads it: spaces first, then
/// octal digits, then a byte that ends the field (a NUL or a space) or the
/// word's end. What follows that byte is not read, as the loop does not.
private struct OctalWord {
    /// The first byte after the leading spaces (`width`: the word is all spaces).
    let start: Int
    /// The first byte after the digits (`width`: they run to the word's end).
    let end: Int
    /// The byte at ``end`` ends the field well: a NUL, a space, or the word's end.
    let endsWell: Bool
    /// The digits `start ..< end` as a number (below 8^8).
    let value: Int

    static var high: UInt64 { 0x8080_8080_8080_8080 }

    /// 0x80 in each byte of `word` that is 0, 0 in the others, exactly.
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(((word & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F) | word) & high
    }

    /// 0x80 in each byte of `word` that is an octal digit, '0' to '7'
    /// (0x30 to 0x37: their top five bits 0x30), 0 in the others.
    @inline(__always)
    static func digits(_ word: UInt64) -> UInt64 {
        zeroBytes((word & 0xF8F8_F8F8_F8F8_F8F8) ^ 0x3030_3030_3030_3030)
    }

    /// Whether `byte` (in a word's low byte, the rest 0) ends a field: a NUL or a space.
    @inline(__always)
    static func ends(_ byte: UInt64) -> Bool { byte | 0x20 == 0x20 }

    /// The number the octal digits of `word` make, the first in the low
    /// byte, the last in the top one; a byte 0 before the first counts as
    /// a leading zero. Bytes that are not 0 or digits give a wrong number.
    @inline(__always)
    static func join(_ word: UInt64) -> Int {
        // Digits to values 0 to 7 (a byte 0 stays 0, as 0 ^ 0x30 then & 7).
        var lanes = (word ^ 0x3030_3030_3030_3030) & 0x0707_0707_0707_0707
        // Joined pairwise, the earlier digit the higher: 8 digits of 3 bits
        // into 4 of 6 in 16-bit lanes, 2 of 12 in 32-bit lanes, one of 24.
        lanes = (lanes &<< 3 &+ lanes &>> 8) & 0x00FF_00FF_00FF_00FF
        lanes = (lanes &<< 6 &+ lanes &>> 16) & 0x0000_FFFF_0000_FFFF
        lanes = (lanes &<< 12 &+ lanes &>> 32) & 0xFF_FFFF
        return Int(lanes)
    }

    /// The first `width` bytes (1 to 8) of `word`; spaces before the digits
    /// are stepped over unless `leadingSpaces` is false (the second word of
    /// a field, whose digits go on from the first).
    @inline(__always)
    init(_ word: UInt64, width: Int, leadingSpaces: Bool = true) {
        // Byte i's high bit set in `inside` for i < width.
        let inside = width == 8 ? Self.high : Self.high & (1 << (8 * width) &- 1)
        let spaces = Self.zeroBytes(word ^ 0x2020_2020_2020_2020) & inside
        let digits = Self.digits(word) & inside
        let enders = (spaces | Self.zeroBytes(word)) & inside
        let start = leadingSpaces ? min(width, (~spaces & inside).trailingZeroBitCount >> 3) : 0
        self.start = start
        // The first byte from `start` on that is not a digit (or `width`).
        let notDigits = ~digits & inside & (start == 8 ? 0 : ~0 &<< (8 * start))
        let end = min(width, notDigits.trailingZeroBitCount >> 3)
        self.end = end
        // Below: end < width <= 8, so every shift is below 64.
        endsWell = end == width || enders &>> (8 * end) & 0x80 != 0
        guard end > start else {
            value = 0
            return
        }
        // The digits, bytes start ..< end (0 < end <= 8), moved up so the
        // last is the top byte, every byte below the first made 0.
        let kept: UInt64 = (end == 8 ? ~0 : (1 &<< (8 * end)) &- 1) & ~0 &<< (8 * start)
        value = Self.join((word & kept) &<< (8 * (8 - end)))
    }
}
