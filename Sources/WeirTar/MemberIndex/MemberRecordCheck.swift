/// The check made on a member before a byte of it is served
/// (docs/members.md, "What a reader checks"), by `weir -d --member`, `-t`,
/// ``TarArchive``'s reads and `weir mount`: the record the member index
/// lists must be what the member's own header blocks say. The blocks must
/// parse as tar and name the record's path (``TarHeaderCheck``); then, read
/// as ``TarWalk`` reads them when it makes the index:
///
/// - the type, as the index records it (``TarHeader/indexedType(_:path:)``:
///   a file, a hard or symbolic link, a device, a folder, a FIFO): a record
///   that calls a file a hard link would bring another member with it, one
///   that calls it a folder shows a folder in its place;
/// - a link's target (a pax `linkpath`, a GNU long link `K`, else the
///   header's field);
/// - the data length: the stored size (a pax `size` record, else the
///   header's size field; none for links, devices, folders and FIFOs),
///   rounded up to 512-byte blocks, less a pax sparse 1.0 member's map,
///   which the index counts with the header blocks. An index whose checksum
///   is right but whose data length is 0 would otherwise write the header
///   alone (tar x: an empty or zero-filled file); one too long, the next
///   members' bytes;
/// - the size: the stored size, or a sparse member's real size (pax
///   `GNU.sparse.realsize` or `.size`, GNU's `S` header); none for links'
///   targets, devices, folders and FIFOs. A mount serves a file's size as
///   the index gives it: 100 for a 6-byte file would read 94 bytes past it.
///
/// What it does not compare: mode, owner, times and device numbers (shown
/// as the index lists them; version 1 of the index keeps no device numbers).
package enum MemberRecordCheck {
    /// The most bytes of header blocks a reader takes for one member. No
    /// tar writes more (pax records of a few KiB, a sparse map of a few
    /// blocks): an index that says so is not believed with the memory it
    /// would take.
    package static let headerBlocksMost = 16 << 20

    /// Why a record's `count` bytes of header blocks are not read: nil when they are.
    package static func headerBlocksProblem(_ count: Int) -> String? {
        count <= headerBlocksMost ? nil
            : "it lists \(count) bytes of header blocks, more than the \(headerBlocksMost) a reader takes"
    }

    /// Why the record — `path`, `type`, `link`, `dataLength`, `size` — is
    /// not what the header blocks `header` give; nil when it is.
    package static func problem(in header: UnsafeRawBufferPointer, path: [UInt8], type recorded: UInt8,
                                link: [UInt8], dataLength: Int, size recordedSize: Int) -> String? {
        if let problem = TarHeaderCheck.problem(in: header, path: path) { return problem }
        let block = TarHeaderCheck.block
        var at = 0
        var paxSize: Int?
        var paxSparseMap = false
        var paxRealSize: Int?
        var longLink: [UInt8]?
        var paxHeaders = 0
        var longNames = 0
        var paxNamed = false
        while at + block <= header.count {
            let one = UnsafeRawBufferPointer(rebasing: header[at ..< at + block])
            let raw = one[156]
            let parsed = TarHeader(one)
            if parsed.sizeReadOtherwise {
                return "the header block at +\(at) has a size field that begins with a NUL, which tars read otherwise"
            }
            guard let size = parsed.size else {
                return "the header block at +\(at) has no valid size"
            }
            let extended = raw == UInt8(ascii: "x") || raw == UInt8(ascii: "L") || raw == UInt8(ascii: "K")
                || raw == UInt8(ascii: "g") || raw == UInt8(ascii: "X") || raw == UInt8(ascii: "V")
                || raw == UInt8(ascii: "A")
            guard extended else {
                if longNames > 0, paxNamed { return "a GNU long name and a pax path, which tars read otherwise" }
                let type = TarHeader.indexedType(raw, path: path)
                // A folder's record says so itself: readers make a file of a record of type 0 whatever
                // its name (the writer records the type it indexes, never 0 for a name with a slash).
                let listed = TarHeader.indexedType(recorded, path: path)
                if type != listed || (type == UInt8(ascii: "5") && recorded != type) {
                    return "its header's type is \(shown([raw])), the index's \(shown([recorded]))"
                }
                if type == UInt8(ascii: "1") || type == UInt8(ascii: "2") {
                    let stored = longLink ?? Array(one[157 ..< 257].prefix { $0 != 0 })
                    if stored != link { return "its header links to \(shown(stored)), the index to \(shown(link))" }
                }
                let stored = TarHeader.storedData(type: raw, size: paxSize ?? size)
                if let why = TarHeader.readOtherwise(raw: raw, indexed: type, stored: stored) {
                    return "its header gives \(why), which tars read otherwise"
                }
                // A pax sparse 1.0 member's map begins its stored data; the index counts it as header.
                let map = paxSparseMap ? header.count - (at + block) : 0
                let expected = (stored + block - 1) / block * block - map
                if dataLength != expected {
                    return "its header gives \(stored) bytes of data (\(expected) in the archive), "
                        + "the index \(dataLength)"
                }
                let real = TarHeader.indexedSize(type: type, stored: paxSize ?? size, sparseRealSize: paxRealSize,
                                                 gnuRealSize: TarHeader(one).gnuRealSize)
                if recordedSize != real {
                    return "its header gives a size of \(real) bytes, the index \(recordedSize)"
                }
                return nil
            }
            let dataEnd = at + block + size
            guard dataEnd <= header.count else { return nil }  // TarHeaderCheck refused it
            if raw == UInt8(ascii: "A") {
                return "a Solaris ACL header (A), which tars read otherwise"
            }
            let records = raw == UInt8(ascii: "g") || raw == UInt8(ascii: "x") || raw == UInt8(ascii: "X")
                ? PaxRecords(UnsafeRawBufferPointer(rebasing: header[at + block ..< dataEnd])) : nil
            if records?.malformed == true { return "a pax record at +\(at + block) that tars read otherwise" }
            if raw == UInt8(ascii: "g") {
                if records?.setsIndexedField == true {
                    return "a pax global header before it changes what tar makes of the members after it"
                }
            } else if raw == UInt8(ascii: "x") || raw == UInt8(ascii: "X") {
                if paxHeaders > 0 { return "two pax headers, which tars merge or replace" }
                paxHeaders += 1
                let data = UnsafeRawBufferPointer(rebasing: header[at + block ..< dataEnd])
                if let found = TarHeaderCheck.paxRecord(in: data, key: Array("size".utf8)) {
                    guard let value = Int(String(decoding: found, as: UTF8.self)), value >= 0 else {
                        return "its pax size record \(shown(found)) is not a size"
                    }
                    paxSize = value
                }
                if TarHeaderCheck.paxRecord(in: data, key: Array("GNU.sparse.major".utf8)) == Array("1".utf8) {
                    paxSparseMap = true
                }
                if let found = TarHeaderCheck.paxRecord(in: data, key: Array("linkpath".utf8)) {
                    if longLink != nil { return "a GNU long link and a pax linkpath, which tars read otherwise" }
                    longLink = found
                }
                if TarHeaderCheck.paxRecord(in: data, key: Array("path".utf8)) != nil
                    || TarHeaderCheck.paxRecord(in: data, key: Array("GNU.sparse.name".utf8)) != nil {
                    paxNamed = true
                }
                if let found = records?.sparseRealSize { paxRealSize = found }
            } else if raw == UInt8(ascii: "L") {
                if longNames > 0 { return "two GNU long names, which tars read otherwise" }
                longNames += 1
            }
            if raw == UInt8(ascii: "K") {
                if longLink != nil { return "two GNU long links, which tars read otherwise" }
                longLink = Array(UnsafeRawBufferPointer(rebasing: header[at + block ..< dataEnd]).prefix { $0 != 0 })
            }
            at = dataEnd + (block - size % block) % block
        }
        return nil
    }

    /// Why `member`'s record is not what the header blocks `header` give; nil when it is.
    package static func problem(in header: UnsafeRawBufferPointer, of member: MemberIndex.Member) -> String? {
        problem(in: header, path: member.path, type: member.type, link: member.link, dataLength: member.dataLength,
                size: member.size)
    }

    /// Bytes as a message quotes them.
    private static func shown(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }
}
