import WeirTar

/// The member indexes the tests of the codec, of selection and of reading
/// share: a sample of GNU tar's layout, and any index as the compressor
/// writes it (version 2, columns).
extension MemberIndex {
    /// Three members as GNU tar lays them out: a folder, a file whose name
    /// needs a pax header, a symbolic link; names that share a prefix, a
    /// name that is not UTF-8, an mtime before the epoch.
    static func sample() -> MemberIndex {
        let long = Array(("dir/" + String(repeating: "n", count: 300)).utf8)
        return MemberIndex(members: [
            .init(headerOffset: 0, headerLength: 512, dataLength: 0, size: 0, mtime: 1_700_000_000, mode: 0o755,
                  uid: 1000, gid: 1000, type: UInt8(ascii: "5"), path: Array("dir/".utf8),
                  uname: Array("alice".utf8), gname: Array("staff".utf8)),
            .init(headerOffset: 512, headerLength: 1536, dataLength: 1024, size: 700, mtime: -86400, mode: 0o4644,
                  uid: 1000, gid: 1000, path: long, uname: Array("alice".utf8), gname: Array("staff".utf8)),
            .init(headerOffset: 3584, headerLength: 512, dataLength: 0, size: 0, mtime: 5, mode: 0o777,
                  uid: 0, gid: 0, type: UInt8(ascii: "2"), path: Array("dir/l\u{e9}".utf8.dropLast()) + [0xE9],
                  link: long, uname: Array("root".utf8), gname: []),
        ], endedEarly: false, endOffset: 4096, contentSize: 10240)
    }

    /// `index` written as the compressor writes it: version 2, columns compressed as they come.
    /// Its files go in `spillFolder` (nil: /tmp); the blocks' file takes `blocksCapacity` bytes at most.
    static func version2(_ index: MemberIndex, level: Int = 3, spillBound: Int = MemberIndex.spillBound,
                         blockBytes: Int = MemberIndex.blockBytes, spillFolder: String? = nil,
                         blocksCapacity: Int = .max) throws -> [UInt8] {
        let writer = MemberIndex.ColumnWriter(level: level, spillBound: spillBound, blockBytes: blockBytes,
                                              spillFolder: spillFolder, blocksCapacity: blocksCapacity)
        for member in index.members { writer.append(member) }
        let frame = try writer.frame(endedEarly: index.endedEarly, endOffset: index.endOffset,
                                     contentSize: index.contentSize, path: "a.tar.zst")
        if spillFolder == nil, (frame.spill != nil) != (spillBound < MemberIndex.spillBound) {
            throw SpillNotAsAsked(spillBound: spillBound, spilled: frame.spill != nil)
        }
        return try frame.bytes(path: "a.tar.zst")
    }
}

/// A version 2 sample whose compressed bytes spilled (or not) against what
/// its spill bound asked.
private struct SpillNotAsAsked: Error, CustomStringConvertible {
    let spillBound: Int
    let spilled: Bool
    var description: String { "spill bound \(spillBound): the index \(spilled ? "spilled" : "did not spill")" }
}
