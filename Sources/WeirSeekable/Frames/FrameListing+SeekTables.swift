import WeirFormats
import WeirSystem

/// The index's seek tables: read from the end of the file (``SeekTable``
/// decodes them, from the bytes read here), followed back through a
/// concatenation's parts, and checked against the frames they list.
extension FrameListing {
    /// The chain of seek tables of a concatenation of seekable files
    /// (`cat a.zst b.zst`) that ends with `last`, the file's own table, in
    /// file order: while a table's frames start after offset 0, the table
    /// that ends where they start comes before it (each part's table lists
    /// the frames since the previous table). The chain stops at a table that
    /// describes frames from offset 0, or where no valid table ends; the
    /// first table's ``SeekTable/dataStart`` says where the described part begins.
    static func seekTableChain(endingWith last: SeekTable, in file: Descriptor) -> [SeekTable] {
        // Each link ends where the one after it begins: the walk ends.
        var backwards = [last]
        while let earliest = backwards.last, earliest.dataStart > 0,
              let previous = try? SeekTable.atEnd(of: file, fileSize: earliest.dataStart) {
            backwards.append(previous)
        }
        return backwards.reversed()
    }

    /// The listing from a file's chain of seek tables (one, or one per part
    /// of a concatenation), after the frames `prefix` found before the first
    /// table's; nil when a table does not match the frames' headers (then
    /// the file is scanned instead).
    ///
    /// Each entry's offset must hold a zstd frame header that declares the
    /// entry's content size, if it declares one, and the 4 bytes before the
    /// next frame (or the table) must be the entry's checksum when the frame
    /// has one: one `pread` of 22 bytes per frame reads both. An entry of no
    /// content may be a skippable frame (an earlier part's table, pzstd's
    /// size frames, in a table `weir --index` wrote) whose header gives the
    /// entry's size.
    ///
    /// - Throws: ``WeirError`` `.corrupt` for an entry whose sizes no zstd
    ///   frame can have (``SeekTable/impossibility(of:number:)``), where its
    ///   offset holds a zstd frame: one of 150 KB listed with no content
    ///   would shift every content offset after it.
    ///
    /// With `trusting`, the entries are taken as the table gives them
    /// (``trustedTable(_:in:firstIndex:)``): no frame header is read.
    /// With `walkingBlocks`, each entry's compressed size must be where its
    /// frame ends too (``frameEnd(in:at:header:before:)``).
    static func fromTables(_ tables: [SeekTable], after prefix: [Frame], in file: Descriptor,
                           fileSize: Int, trusting: Bool = false,
                           walkingBlocks: Bool = false) throws(WeirError) -> FrameListing? {
        var frames = prefix
        for table in tables {
            let found = trusting ? try trustedTable(table, in: file, firstIndex: frames.count)
                : try fromTable(table, in: file, firstIndex: frames.count, walkingBlocks: walkingBlocks)
            guard let described = found else { return nil }
            frames += described
            frames.append(Frame(index: frames.count, offset: table.tableOffset, compressedSize: table.encodedSize,
                                decompressedSize: 0, isSkippable: true, checksum: nil, hasChecksum: false))
        }
        return FrameListing(path: file.path, fileSize: fileSize, frames: frames, fromSeekTable: true,
                            seekTables: tables.count)
    }

    /// The frames one seek table describes, numbered from `firstIndex`; nil
    /// when they do not match the table (see ``fromTables(_:after:in:fileSize:)``).
    ///
    /// - Throws: as ``fromTables(_:after:in:fileSize:)``.
    private static func fromTable(_ table: SeekTable, in file: Descriptor, firstIndex: Int,
                                  walkingBlocks: Bool) throws(WeirError) -> [Frame]? {
        let entries = table.entries
        var frames: [Frame] = []
        frames.reserveCapacity(entries.count)
        var previousHasChecksum = false
        var next = table.dataStart
        for index in 0 ... entries.count {
            // Where this frame (or, past the last, the table) begins.
            let start = next
            if index < entries.count { next += Int(entries[index].compressedSize) }
            let lead = index > 0 ? min(4, Int(entries[index - 1].compressedSize)) : 0
            let count = lead + (index < entries.count ? min(18, Int(entries[index].compressedSize)) : 0)
            guard let bytes = try? file.read(count: count, at: start - lead, operation: .list),
                  bytes.count == count else { return nil }
            if index > 0, table.hasChecksums, previousHasChecksum {
                guard lead == 4, entries[index - 1].checksum == littleEndian32(bytes) else { return nil }
            }
            guard index < entries.count else { break }
            let entry = entries[index]
            let compressedSize = Int(entry.compressedSize), content = Int(entry.decompressedSize)
            let header = Array(bytes[lead...])
            if header.count >= 8, case .skippable = FrameHeader.kind(ofMagic: littleEndian32(header)) {
                // A skippable frame: no content, and the size its header gives.
                guard content == 0, 8 + Int(littleEndian32(Array(header[4...]))) == compressedSize else { return nil }
                frames.append(Frame(index: firstIndex + index, offset: start, compressedSize: compressedSize,
                                    decompressedSize: 0, isSkippable: true, checksum: nil, hasChecksum: false))
                previousHasChecksum = false
                continue
            }
            var scanner = FrameScanner(path: file.path, operation: .list)
            let fed = header.withUnsafeBytes { header in
                Result { () throws(WeirError) in try scanner.feed(header) }
            }
            // A frame of 18 bytes or less ends inside them: its header comes with its boundary.
            guard case .success(let ended) = fed, let parsed = scanner.currentHeader ?? ended.first?.header,
                  !parsed.isSkippable else { return nil }
            if let declared = parsed.contentSize, declared != UInt64(content) { return nil }
            if walkingBlocks,
               frameEnd(in: file, at: start, header: parsed, before: start + compressedSize + 1)
                != start + compressedSize {
                return nil
            }
            if let why = SeekTable.impossibility(of: entry, number: index) {
                throw WeirError.corruptSeekTable(
                    path: file.path, "\(why): frame \(firstIndex + index) at offset \(start) is a zstd frame")
            }
            frames.append(Frame(index: firstIndex + index, offset: start, compressedSize: compressedSize,
                                decompressedSize: content, isSkippable: false,
                                checksum: parsed.hasChecksum && table.hasChecksums ? entry.checksum : nil,
                                hasChecksum: parsed.hasChecksum, windowSize: parsed.windowSize,
                                dictionaryID: parsed.dictionaryID, sizeFromTableOnly: parsed.contentSize == nil))
            previousHasChecksum = parsed.hasChecksum
        }
        return frames
    }

    /// The frames one seek table describes, numbered from `firstIndex`, as
    /// the table gives them: what the seekable format's readers do (zstd's
    /// contrib reader, indexed_zstd, pyzstd), so that opening a file reads
    /// its footer and table, not a header per frame. Each frame is checked
    /// against its entry when it is decoded (``SeekableReader``: its header,
    /// its size, its checksum); here only what the entries alone refute.
    ///
    /// An entry of content is a zstd frame, and must have sizes one can
    /// have (``SeekTable/impossibility(of:number:)``). An entry of no content
    /// is a skippable frame (an earlier part's table, a member index) or an
    /// empty zstd frame; when its compressed size is more than any empty zstd
    /// frame takes, its first 8 bytes are read (one `pread`, rare: weir
    /// writes one per member index): a zstd frame there is refused, as
    /// ``fromTable(_:in:firstIndex:)`` refuses it; a skippable frame of
    /// another size, or no frame, returns nil (the file is scanned).
    ///
    /// - Throws: ``WeirError`` `.corrupt` for an impossible entry.
    private static func trustedTable(_ table: SeekTable, in file: Descriptor,
                                     firstIndex: Int) throws(WeirError) -> [Frame]? {
        var frames: [Frame] = []
        frames.reserveCapacity(table.entries.count)
        var start = table.dataStart
        for (index, entry) in table.entries.enumerated() {
            defer { start += Int(entry.compressedSize) }
            let compressedSize = Int(entry.compressedSize), content = Int(entry.decompressedSize)
            if content == 0 {
                if compressedSize > SeekTable.mostCompressed(content: 0) {
                    guard let header = try? file.read(count: 8, at: start, operation: .list),
                          header.count == 8 else { return nil }
                    switch FrameHeader.kind(ofMagic: littleEndian32(header)) {
                    case .skippable:
                        guard 8 + Int(littleEndian32(Array(header[4...]))) == compressedSize else { return nil }
                    case .zstd:
                        let why = SeekTable.impossibility(of: entry, number: index) ?? ""
                        throw WeirError.corruptSeekTable(
                            path: file.path, "\(why): frame \(firstIndex + index) at offset \(start) is a zstd frame")
                    case nil:
                        return nil
                    }
                }
                // No content either way: no read ever decodes it.
                frames.append(Frame(index: firstIndex + index, offset: start, compressedSize: compressedSize,
                                    decompressedSize: 0, isSkippable: true, checksum: nil, hasChecksum: false))
                continue
            }
            if let why = SeekTable.impossibility(of: entry, number: index) {
                throw WeirError.corruptSeekTable(
                    path: file.path, "\(why): frame \(firstIndex + index) at offset \(start) would be a zstd frame")
            }
            frames.append(Frame(index: firstIndex + index, offset: start, compressedSize: compressedSize,
                                decompressedSize: content, isSkippable: false,
                                checksum: table.hasChecksums ? entry.checksum : nil,
                                hasChecksum: table.hasChecksums, sizeFromTableOnly: true, headerUnread: true))
        }
        return frames
    }

    /// Where the zstd frame at `offset`, whose header is `header`, ends in
    /// `file`: its block headers read one by one (3 bytes each: a block's
    /// type and size give where the next begins), to the last block, then
    /// its checksum. Nil when a block header cannot be read or is not one
    /// (a reserved type, a size past the frame's block maximum), or the walk
    /// reaches `limit` first.
    static func frameEnd(in file: Descriptor, at offset: Int, header: FrameHeader, before limit: Int) -> Int? {
        var at = offset + header.headerSize
        while at + 3 <= limit {
            guard let bytes = try? file.read(count: 3, at: at, operation: .list), bytes.count == 3 else { return nil }
            let value = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
            let size = value >> 3
            let stored: Int
            switch value >> 1 & 3 {
            case 0: stored = size  // raw
            case 1: stored = 1  // RLE: one byte, repeated
            case 2: stored = size  // compressed
            default: return nil
            }
            guard size <= header.blockMaximumSize else { return nil }
            at += 3 + stored
            if value & 1 != 0 {
                let end = at + (header.hasChecksum ? 4 : 0)
                return end <= limit ? end : nil
            }
        }
        return nil
    }

    /// The little-endian u32 that `bytes` begins with.
    private static func littleEndian32(_ bytes: [UInt8]) -> UInt32 {
        UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }
}
