/// The second half of the check made on a member before a byte of it is
/// written (docs/members.md, "What a reader checks"): the data length the
/// member index gives must be what the member's header blocks say its data
/// takes in the archive — the stored size (a pax `size` record, else the
/// header's size field; a GNU sparse member's stored data), rounded up to
/// 512-byte blocks, less a pax sparse 1.0 member's map, which the index
/// counts with the header blocks. An index whose checksum is right but
/// whose data length is 0 would otherwise write the header alone (tar x:
/// an empty or zero-filled file); one too long, the next members' bytes.
/// Whether the member is a hard or symbolic link and, for a link, its target
/// (a pax `linkpath`, a GNU long link `K`, else the header's field) must be
/// the record's too: a record that calls a file a hard link would bring
/// another member with it.
///
/// The header blocks are those ``TarHeaderCheck`` checked already (every
/// checksum right, the name the index lists). A minimal parser of its own:
/// the direct header parser of issue 68 is to replace it.
package enum MemberDataLengthCheck {
    /// Why `dataLength`, `type` or `link` is not what the header blocks
    /// `header` give; nil when they are.
    package static func problem(in header: UnsafeRawBufferPointer, dataLength: Int, type recorded: UInt8,
                                link: [UInt8]) -> String? {
        let block = TarHeaderCheck.block
        guard header.count >= block, header.count % block == 0 else { return nil }
        var at = 0
        var paxSize: Int?
        var paxSparseMap = false
        var longLink: [UInt8]?
        while at + block <= header.count {
            let one = UnsafeRawBufferPointer(rebasing: header[at ..< at + block])
            let type = one[156]
            guard let size = TarHeaderCheck.number(UnsafeRawBufferPointer(rebasing: one[124 ..< 136])) else {
                return "the header block at +\(at) has no valid size"
            }
            let extended = type == UInt8(ascii: "x") || type == UInt8(ascii: "L") || type == UInt8(ascii: "K")
                || type == UInt8(ascii: "g") || type == UInt8(ascii: "X")
            guard extended else {
                // Links are what change a selection (a hard link brings its target): the type is compared
                // as link or not (the scan, TarWalk, records `0` for a v7 `\0` or a contiguous `7`).
                let hard = UInt8(ascii: "1"), symbolic = UInt8(ascii: "2")
                if (type == hard) != (recorded == hard) || (type == symbolic) != (recorded == symbolic) {
                    return "its header's type is \(String(decoding: [type], as: UTF8.self).debugDescription), "
                        + "the index's \(String(decoding: [recorded], as: UTF8.self).debugDescription)"
                }
                if type == UInt8(ascii: "1") || type == UInt8(ascii: "2") {
                    let stored = longLink ?? Array(one[157 ..< 257].prefix { $0 != 0 })
                    if stored != link {
                        return "its header links to \(String(decoding: stored, as: UTF8.self).debugDescription), "
                            + "the index to \(String(decoding: link, as: UTF8.self).debugDescription)"
                    }
                }
                let stored = paxSize ?? size
                // A pax sparse 1.0 member's map begins its stored data; the index counts it as header.
                let map = paxSparseMap ? header.count - (at + block) : 0
                let expected = (stored + block - 1) / block * block - map
                if dataLength != expected {
                    return "its header gives \(stored) bytes of data (\(expected) in the archive), "
                        + "the index \(dataLength)"
                }
                return nil
            }
            let dataEnd = at + block + size
            guard dataEnd <= header.count else { return nil }  // TarHeaderCheck refuses it
            if type == UInt8(ascii: "x") || type == UInt8(ascii: "X") {
                let data = UnsafeRawBufferPointer(rebasing: header[at + block ..< dataEnd])
                if let found = TarHeaderCheck.paxRecord(in: data, key: Array("size".utf8)) {
                    guard let value = Int(String(decoding: found, as: UTF8.self)), value >= 0 else {
                        return "its pax size record \(String(decoding: found, as: UTF8.self).debugDescription) "
                            + "is not a size"
                    }
                    paxSize = value
                }
                if TarHeaderCheck.paxRecord(in: data, key: Array("GNU.sparse.major".utf8)) == Array("1".utf8) {
                    paxSparseMap = true
                }
                if let found = TarHeaderCheck.paxRecord(in: data, key: Array("linkpath".utf8)) { longLink = found }
            } else if type == UInt8(ascii: "K") {
                longLink = Array(UnsafeRawBufferPointer(rebasing: header[at + block ..< dataEnd]).prefix { $0 != 0 })
            }
            at = dataEnd + (block - size % block) % block
        }
        return nil
    }
}
