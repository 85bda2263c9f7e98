import WeirFormats
import WeirSystem

/// Finding the index in a file from the file's seek table alone
/// (docs/members.md, "Where it is"): the entry just before the table, of
/// decompressed size 0, whose frame's first four bytes are `0x184D2A5B`.
extension MemberIndex {
    /// Where the index's skippable frame stands in `file`, whose seek table
    /// is `table`; nil when the table's last entry is not an index's frame.
    ///
    /// - Throws: `WeirError` `.system` when `pread` fails, `.truncated`
    ///   when the file is shorter than its table says.
    package static func location(in file: Descriptor, table: SeekTable) throws(WeirError) -> Range<Int>? {
        guard let last = table.entries.last, last.decompressedSize == 0,
              Int(last.compressedSize) >= 8 + contentMagic.count else { return nil }
        let start = table.tableOffset - Int(last.compressedSize)
        let magic = try file.read(count: 4, at: start, operation: .readMemberIndex)
        guard magic.count == 4 else {
            throw WeirError.truncated(path: file.path, operation: .readMemberIndex,
                                      "the file ends at offset \(start + magic.count), inside its member index")
        }
        let value = magic.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return value == skippableMagic ? start ..< table.tableOffset : nil
    }

    /// The largest last frame read whole before its magic is known: an
    /// index of some 2.5 million members.
    static let wholeFrameRead = 16 << 20

    /// The index of `file`, whose seek table is `table`, and where its frame
    /// stands; nil when the file has none.
    ///
    /// - Throws: as ``location(in:table:)``; as ``decode(frame:path:offset:)``
    ///   for a damaged index.
    package static func read(in file: Descriptor, table: SeekTable) throws(WeirError)
        -> (index: MemberIndex, frame: Range<Int>)? {
        guard let found = try records(in: file, table: table) else { return nil }
        return (try found.records.index(), found.frame)
    }

    /// The record list of the index of `file`, whose seek table is `table`,
    /// not made into members (checked whole with `checking`, else by its
    /// first walk, which with `walkingAsDecoded` reads it as it is decoded:
    /// ``records(frame:path:offset:checking:walkingAsDecoded:)``), and where
    /// its frame stands; nil when the file has none.
    ///
    /// - Throws: as ``read(in:table:)``.
    package static func records(in file: Descriptor, table: SeekTable, checking: Bool = true,
                                walkingAsDecoded: Bool = false) throws(WeirError)
        -> (records: Records, frame: Range<Int>)? {
        guard let last = table.entries.last, last.decompressedSize == 0,
              Int(last.compressedSize) >= 8 + contentMagic.count else { return nil }
        // One read when the frame is small enough to take whole: its first
        // four bytes then say whether it is an index. A larger one is
        // located first, so that another kind of frame is never read whole.
        let range: Range<Int>
        if Int(last.compressedSize) <= wholeFrameRead {
            range = table.tableOffset - Int(last.compressedSize) ..< table.tableOffset
        } else {
            guard let located = try location(in: file, table: table) else { return nil }
            range = located
        }
        let frame = try file.read(count: range.count, at: range.lowerBound, operation: .readMemberIndex)
        let magic = frame.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if frame.count >= 4, magic != skippableMagic { return nil }
        guard frame.count == range.count else {
            throw WeirError.truncated(path: file.path, operation: .readMemberIndex,
                                      "the file ends at offset \(range.lowerBound + frame.count), "
                                          + "inside its member index")
        }
        return (try records(frame: frame, path: file.path, offset: range.lowerBound, checking: checking,
                            walkingAsDecoded: walkingAsDecoded), range)
    }

    /// The index of the file at `path` and where its frame stands; nil when
    /// the file has no seek table or no index before it.
    ///
    /// - Throws: `WeirError` when the file cannot be opened or read, its
    ///   seek table is damaged, or its index is.
    package static func read(path: String) throws(WeirError) -> (index: MemberIndex, frame: Range<Int>)? {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        let size = try file.status().size
        guard let table = try SeekTable.atEnd(of: file, fileSize: size) else { return nil }
        return try read(in: file, table: table)
    }
}
