import Dispatch
import FoundationEssentials
import WeirFormats
import WeirPipeline
import WeirSystem
import WeirTar

/// A `.tar.zst` read through its member index (docs/members.md): the
/// members listed without decoding anything, and any member's bytes read by
/// decoding only the frames that hold them (a ``SeekableReader``).
///
/// Every member read is checked first: its header blocks must parse as tar
/// and give the record the index lists (`MemberRecordCheck`, WeirTar's: its path,
/// type, link, data length and size), or the read fails ("member index
/// disagrees with the archive") before any of its bytes is handed on.
///
/// Safe to share across threads: reads go on at once (the reader's).
public final class TarArchive: Sendable {
    /// The file, as given.
    public let path: String
    /// The index's record list, checked whole when the archive opened;
    /// walked member by member, never kept as values (a listing needs none).
    package let records: MemberIndex.Records
    /// Whether the tar stream ended early (no end blocks, or a member cut short).
    public let endedEarly: Bool
    /// Where the index's frame stands in the file.
    let indexFrame: Range<Int>
    private let options: DecompressionOptions
    /// The file, open while the archive lives, and its seek table, read
    /// once: the reader is made from them, not by reading the table again.
    private let file: Descriptor
    private let table: SeekTable
    /// Made at the first read: listing decodes nothing.
    private let reader = Locked<SeekableReader?>(nil)

    /// Opens `path` and reads its member index.
    ///
    /// - Throws: `WeirError`: `.noMemberIndex` when the file has none
    ///   (`.notTar` when its content is not a tar either), `.corrupt` for a
    ///   damaged index (with the file offset of its frame), or the errors
    ///   of opening and reading the file.
    public convenience init(path: String, options: DecompressionOptions = DecompressionOptions()) throws(WeirError) {
        try self.init(path: path, options: options, checkingIndex: true)
    }

    /// Opens `path` and reads its member index, its records checked whole
    /// with `checkingIndex`. Without, they are checked by the first walk,
    /// which must be ``selecting(_:)`` (it throws what the check would
    /// have): ``members`` and ``select(_:)`` assume a checked index. One walk
    /// instead of two, for `weir -d --member`, and it reads the index as it
    /// is decoded on another thread (``MemberIndex/ColumnStream``).
    package init(path: String, options: DecompressionOptions, checkingIndex: Bool) throws(WeirError) {
        self.path = path
        self.options = options
        let file = try Descriptor.openForReading(path)
        do throws(WeirError) {
            let size = try file.status().size
            guard let table = try SeekTable.atEnd(of: file, fileSize: size),
                  let found = try MemberIndex.records(in: file, table: table, checking: checkingIndex,
                                                      walkingAsDecoded: !checkingIndex) else {
                throw try Self.missingIndex(path: path, options: options)
            }
            (self.file, self.table, records, indexFrame) = (file, table, found.records, found.frame)
            endedEarly = found.records.endedEarly
        } catch {
            file.close()
            throw error
        }
    }

    deinit { file.close() }

    /// The members, in archive order (made at each call; weir's own listing
    /// walks the index's records in place instead).
    public var members: [TarMember] {
        // The list was checked whole when the archive opened: walking it again cannot fail.
        TarMember.list((try? records.members()) ?? [])
    }

    /// Why a file has no index: a tar without one, or not a tar at all (its
    /// first frame read through a table checked against the frames: a table
    /// that lies about it is ignored, not an error of the first frame).
    private static func missingIndex(path: String, options: DecompressionOptions) throws(WeirError) -> WeirError {
        let reader = try SeekableReader(path: path, options: options, checkingTable: true)
        let first = try reader.read(at: 0, count: min(reader.count, TarHeaderCheck.block))
        let isTar = first.count == TarHeaderCheck.block && first.withUnsafeBytes { TarHeaderCheck.checksumMatches($0) }
        return isTar ? .noMemberIndex(path: path, singleFrame: reader.frameCount == 1)
            : .notTar(path: path, operation: .readMemberIndex, at: 0)
    }

    /// The reader of the content, made once, from the file and table the
    /// archive holds.
    package func contentReader() throws(WeirError) -> SeekableReader {
        if let kept = reader.current { return kept }
        // Made under the lock: one reader, however many threads ask at once.
        return try reader.withLock { kept in
            Result { () throws(WeirError) -> SeekableReader in
                if let kept { return kept }
                let made = try SeekableReader(file: file, table: table, options: options, checkingTable: false)
                kept = made
                return made
            }
        }.get()
    }

    /// The bytes of `member` as they stand in the archive — its header
    /// blocks, then its data and padding — handed to `body` in order, the
    /// header blocks checked before anything is handed on.
    ///
    /// - Returns: how many frames were decoded.
    /// - Throws: `WeirError`: `.corrupt` when the header blocks are not
    ///   the member's, an error of decoding, or what `body` throws.
    @discardableResult
    public func read(_ member: TarMember,
                     _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) -> Int {
        let record = member.record
        let reader = try contentReader()
        if let problem = MemberRecordCheck.readProblem(blocks: member.blocksStart ..< record.dataOffset,
                                                       through: record.end, contentEnd: reader.count) {
            throw WeirError.memberIndexDisagrees(path: path, name: member.name, offset: member.blocksStart, problem)
        }
        let headerLength = member.headerBlocksLength
        var header: [UInt8] = []
        header.reserveCapacity(headerLength)
        return try reader.read(member.contentRange) { piece throws(WeirError) in
            var rest = piece
            if header.count < headerLength {
                let taken = min(rest.count, headerLength - header.count)
                header.append(contentsOf: rest.prefix(taken))
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
                guard header.count == headerLength else { return }
                if let problem = header.withUnsafeBytes({ MemberRecordCheck.problem(in: $0, of: record) }) {
                    throw WeirError.memberIndexDisagrees(path: path, name: member.name,
                                                         offset: member.blocksStart, problem)
                }
                try header.withUnsafeBytes { all in Result { () throws(WeirError) in try body(all) } }.get()
            }
            if !rest.isEmpty { try body(rest) }
        }
    }

    /// `weir -t`'s check of the member index of the file at `path`, if it
    /// has one (docs/members.md): the index decoded whole, then every
    /// member's header blocks read at its offset and checked as a read
    /// checks them — they parse as tar, name the path listed, and give the
    /// data length listed. Decodes the frames that hold header blocks.
    ///
    /// - Throws: `WeirError`: `.corrupt` for a damaged index or a member it
    ///   disagrees with ("member index disagrees with the archive"), or the
    ///   errors of reading and decoding the file.
    package static func checkIndex(path: String, options: DecompressionOptions) throws(WeirError) {
        let file = try Descriptor.openForReading(path)
        var found = false
        do throws(WeirError) {
            let size = try file.status().size
            // A table that cannot be read hides no index: whether it fails the
            // test is the decoder's table check's to say (it counts only where
            // the file ends with a seek table's frame, not with a footer-like
            // coincidence), already done when this runs.
            let table: SeekTable?
            do throws(WeirError) {
                table = try SeekTable.atEnd(of: file, fileSize: size)
            } catch where error.kind == .corrupt {
                table = nil
            }
            if let table { found = try MemberIndex.location(in: file, table: table) != nil }
        } catch {
            file.close()
            throw error
        }
        file.close()
        guard found else { return }
        let archive = try TarArchive(path: path, options: options, checkingIndex: true)
        let reader = try archive.contentReader()
        // Each member's header blocks from where the previous one ends: every
        // byte of the content up to the last member's end is checked as tar
        // reads it, so the records are the members a walk from 0 finds.
        var previousEnd = 0
        try archive.records.forEach { member throws(WeirError) in
            let name = String(decoding: member.path, as: UTF8.self)
            let start = previousEnd
            previousEnd = member.end
            let problem = try MemberRecordCheck.problem(blocks: start ..< member.dataOffset, of: member,
                                                        contentEnd: reader.count) { blocks throws(WeirError) in
                [UInt8](try reader.read(at: blocks.lowerBound, count: blocks.count))
            }
            if let problem {
                throw WeirError.memberIndexDisagrees(path: path, name: name, offset: start, problem)
            }
        }
        // The last member ends where the index says the tar's end blocks
        // begin, and they are there: an index that leaves out the members
        // after its last record (a later copy of a name among them) lists
        // what a walk would not end with.
        // An index that says the tar ended early (none weir writes) ends with
        // the content: its last member runs to the content's end.
        let records = archive.records
        if records.endedEarly {
            if previousEnd != records.endOffset || records.endOffset != reader.count {
                throw WeirError.memberIndexDisagrees(
                    path: path, "it says the tar ended early, but its last member ends at \(previousEnd), "
                        + "its end offset is \(records.endOffset) and the content's end \(reader.count)")
            }
        } else {
            let problem: String?
            if previousEnd != records.endOffset {
                problem = "its last member ends at \(previousEnd), its end blocks are said to begin at "
                    + "\(records.endOffset)"
            } else if records.endOffset + TarHeaderCheck.block > reader.count {
                problem = "its end blocks are said to begin at \(records.endOffset), past the content's end "
                    + "at \(reader.count)"
            } else {
                let end = try reader.read(at: records.endOffset, count: TarHeaderCheck.block)
                problem = end.allSatisfy({ $0 == 0 }) ? nil
                    : "no end block at \(records.endOffset), where it says the tar ends: a member's header"
            }
            if let problem { throw WeirError.memberIndexDisagrees(path: path, problem) }
        }
    }

    /// The contents of the regular file `member` (its data without the
    /// header blocks and padding); a sparse file's (GNU tar's `--sparse`:
    /// `TarSparseMap`) with its holes as zeros, as `tar x` writes it.
    ///
    /// - Throws: `WeirError` `.notRegularFile` for a member that is not a
    ///   file (a folder, a link), one cut short, or a sparse file whose
    ///   map cannot be read; or as ``read(_:_:)``.
    public func contents(of member: TarMember) throws(WeirError) -> Data {
        let type = member.type
        guard type == UInt8(ascii: "0") || type == 0 || type == UInt8(ascii: "7") || type == UInt8(ascii: "S") else {
            throw WeirError.notAFile(path: path, name: member.name,
                                     why: "is not a regular file stored whole (type \(Character(.init(type))))")
        }
        let headerLength = member.headerBlocksLength
        var header: [UInt8] = []
        // Told by the header blocks, which come first: a file's contents are its first `size` stored bytes,
        // kept as they come (no copy after); a sparse file's map needs all of them.
        var found: TarSparseMap.Found?
        var keep = member.record.dataLength
        var stored = Data()
        var at = 0
        try read(member) { piece throws(WeirError) in
            if at < headerLength { header.append(contentsOf: piece.prefix(headerLength - at)) }
            if found == nil, header.count == headerLength {
                let parsed = header.withUnsafeBytes { TarSparseMap.parse(header: $0) }
                if parsed == .notSparse { keep = min(keep, member.size) }
                stored.reserveCapacity(keep)
                found = parsed
            }
            let from = max(at, headerLength), to = min(at + piece.count, headerLength + keep)
            if from < to { stored.append(contentsOf: piece[(from - at) ..< (to - at)]) }
            at += piece.count
        }
        let read = stored.withUnsafeBytes { data in
            TarSparseMap.read(found ?? header.withUnsafeBytes({ TarSparseMap.parse(header: $0) }), size: member.size,
                              dataLength: data.count) { count in [UInt8](data.prefix(count)) }
        }
        let map: TarSparseMap, mapLength: Int
        switch read {
        case .success(nil):
            guard stored.count == member.size, type != UInt8(ascii: "S") else {
                throw WeirError.notAFile(path: path, name: member.name, why: "is not a regular file stored whole "
                    + "(\(stored.count) of its \(member.size) bytes stored)")
            }
            return stored
        case let .success(found?): (map, mapLength) = found
        case let .failure(.damaged(why)):
            throw WeirError.notAFile(path: path, name: member.name, why: "is a sparse file: \(why)")
        case .failure(.dataMapDamaged), .failure(.dataMapPastData):
            throw WeirError.notAFile(path: path, name: member.name, why: "is a sparse file whose map is unreadable")
        case .failure(.sizeDiffers), .failure(.segmentsPastData):
            throw WeirError.notAFile(path: path, name: member.name,
                                     why: "is a sparse file whose map does not fit its stored data")
        }
        var data = Data(count: map.size)
        data.withUnsafeMutableBytes { all in
            for piece in map.pieces(of: 0 ..< map.size) {
                guard let at = piece.stored else { continue }
                stored.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: all[piece.offset ..< piece.offset + piece.count])
                        .copyMemory(from: UnsafeRawBufferPointer(
                            rebasing: source[mapLength + at ..< mapLength + at + piece.count]))
                }
            }
        }
        return data
    }

    /// The members matching `patterns`, from an index opened with or
    /// without its check.
    ///
    /// - Throws: `WeirError` `.corrupt` for a damaged index not checked yet.
    package func selecting(_ patterns: [TarMemberPattern]) throws(WeirError) -> TarMemberSelection {
        try TarMemberSelection(records: records, patterns: patterns)
    }

    /// The members matching `patterns`, as ``selecting(_:)``, the frames of
    /// the first one found decoded on another thread while the walk goes on
    /// (``SeekableReader/warm(_:)``): the read that follows finds them
    /// decoded. Returns once that decoding is done.
    ///
    /// - Throws: as ``selecting(_:)``.
    package func selectingAhead(_ patterns: [TarMemberPattern]) throws(WeirError) -> TarMemberSelection {
        let group = DispatchGroup()
        defer { group.wait() }
        var started = false
        return try TarMemberSelection(records: records, patterns: patterns) { range in
            guard !started else { return }
            started = true
            group.enter()
            DispatchQueue.global().async {
                (try? self.contentReader())?.warm(range)
                group.leave()
            }
        }
    }

    /// The members matching `patterns` (``TarMemberSelection``).
    public func select(_ patterns: [TarMemberPattern]) -> TarMemberSelection {
        // The list was checked whole when the archive opened: walking it again cannot fail.
        (try? TarMemberSelection(records: records, patterns: patterns))
            ?? TarMemberSelection(members: [], patterns: patterns)
    }

    /// Writes to `body`, in archive order, a tar stream of `selected`:
    /// each member's bytes as they stand in the archive, then tar's two
    /// zero end blocks; `tar x` reads it.
    ///
    /// - Returns: how many frames were decoded (a frame once per member).
    @discardableResult
    public func writeTar(of selected: [TarMember],
                         _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) -> Int {
        var frames = 0
        for member in selected { frames += try read(member, body) }
        let end = [UInt8](repeating: 0, count: 2 * TarHeaderCheck.block)
        try end.withUnsafeBytes { all in Result { () throws(WeirError) in try body(all) } }.get()
        return frames
    }
}
