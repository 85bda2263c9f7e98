import WeirSystem

/// The seek table of zstd's seekable format (`contrib/seekable_format` in
/// the zstd sources): a skippable frame at the very end of a file that lists
/// the compressed and decompressed size of every frame before it, so that a
/// reader can find any frame at once and decode frames in parallel.
///
/// Layout, all little-endian:
///
///     magic 0x184D2A5E (u32) · Frame_Size (u32) ·
///     entries: Compressed_Size (u32) · Decompressed_Size (u32) · [Checksum (u32)] ·
///     footer: Number_Of_Frames (u32) · descriptor (u8) · magic 0x8F92EAB1 (u32)
///
/// In the descriptor, bit 7 says the entries carry checksums (the low 32 bits
/// of XXH64 of the frame's content: the value a zstd frame stores as its own
/// content checksum, ``FrameBoundary/contentChecksum``); bits 2–6 are
/// reserved and must be zero; bits 0–1 are unused and ignored.
///
/// Stock decoders skip the table like any skippable frame, so `zstd -d`
/// decodes a file with a table appended to the same bytes as without it.
///
/// Building: append one entry per frame, in file order, then write
/// ``encoded()`` after the last frame. An entry holds sizes up to
/// 4 GiB − 1 (`UInt32.max`): ``append(compressedSize:decompressedSize:checksum:path:)``
/// refuses a frame of 4 GiB or more, on either side, and more than
/// ``maxFrames`` entries.
///
/// Reading: `decode(fileSize:path:reading:)` looks at the last 9 bytes
/// of a file, read by the caller. The frames a table describes must end
/// exactly where the table begins; they may start after offset 0 (a table that describes only the
/// last of several concatenated parts), and ``dataStart`` says where they
/// start. A reader that wants zstd's own rule (the table describes the whole
/// file) checks `dataStart == 0`.
package struct SeekTable: Equatable, Sendable {
    /// What the table records of one frame.
    package struct Entry: Equatable, Sendable {
        /// The frame's size in the file.
        package var compressedSize: UInt32
        /// The size of the frame's content (0 for a skippable frame).
        package var decompressedSize: UInt32
        /// The low 32 bits of XXH64 of the content; 0 in a table without checksums.
        package var checksum: UInt32

        /// Creates an entry.
        package init(compressedSize: UInt32, decompressedSize: UInt32, checksum: UInt32 = 0) {
            self.compressedSize = compressedSize
            self.decompressedSize = decompressedSize
            self.checksum = checksum
        }
    }

    /// The magic number of the skippable frame holding the table (nibble 14).
    static let skippableMagic: UInt32 = 0x184D_2A5E
    /// The magic number that ends the footer, and the file.
    static let footerMagic: UInt32 = 0x8F92_EAB1
    /// The footer's size: Number_Of_Frames, descriptor, magic.
    static let footerSize = 9
    /// A skippable frame's magic and size.
    static let skippableHeaderSize = 8
    /// Entries read per `pread` when loading a table.
    static let entriesPerRead = 4096

    /// The most entries a table may hold (zstd's `ZSTD_SEEKABLE_MAXFRAMES`,
    /// 2²⁷); it keeps the table's skippable frame far below 4 GiB.
    package static let maxFrames = 0x800_0000
    /// The largest compressed or decompressed frame size an entry can hold.
    package static let maxFrameSize = Int(UInt32.max)

    /// One entry per frame, in file order.
    package private(set) var entries: [Entry]
    /// Whether the entries carry checksums (descriptor bit 7).
    package let hasChecksums: Bool
    /// The file offset of the first frame the table describes: for a table
    /// read from a file, where its frames start; for a table being built, 0
    /// unless the caller says otherwise.
    package var dataStart: Int
    /// The sum of the entries' compressed sizes.
    package private(set) var compressedTotal = 0
    /// The sum of the entries' decompressed sizes: the size of the content.
    package private(set) var decompressedTotal = 0

    /// Creates an empty table (which describes an empty file).
    package init(hasChecksums: Bool, dataStart: Int = 0) {
        self.entries = []
        self.hasChecksums = hasChecksums
        self.dataStart = dataStart
    }

    /// Creates a table holding `entries` (their checksums are set to 0 when
    /// `hasChecksums` is false).
    ///
    /// - Throws: ``WeirError`` `.library` when there are more than ``maxFrames`` entries.
    package init(entries: [Entry], hasChecksums: Bool, dataStart: Int = 0, path: String) throws(WeirError) {
        self.init(hasChecksums: hasChecksums, dataStart: dataStart)
        if entries.count > Self.maxFrames { throw Self.tooManyFrames(path: path) }
        self.entries.reserveCapacity(entries.count)
        for entry in entries {
            append(entry)
        }
    }

    /// Adds the entry of the next frame.
    ///
    /// - Parameters:
    ///   - compressedSize: the frame's size in the file, at most ``maxFrameSize``.
    ///   - decompressedSize: the size of its content, at most ``maxFrameSize``.
    ///   - checksum: the low 32 bits of XXH64 of the content; ignored (stored
    ///     as 0) when the table has no checksums.
    ///   - path: how the error names the file.
    /// - Throws: ``WeirError`` `.library` for a size below 0 or of 4 GiB or
    ///   more (the format cannot record it: write smaller frames), or when
    ///   the table already holds ``maxFrames`` entries.
    package mutating func append(compressedSize: Int, decompressedSize: Int, checksum: UInt32 = 0,
                                path: String) throws(WeirError) {
        for size in [compressedSize, decompressedSize] where size < 0 || size > Self.maxFrameSize {
            throw WeirError.library(path: path, operation: .writeSeekTable,
                                    "frame \(entries.count) is too large for a seek table: \(size) bytes "
                                        + "(the seekable format records sizes below 4 GiB)")
        }
        if entries.count >= Self.maxFrames { throw Self.tooManyFrames(path: path) }
        append(Entry(compressedSize: UInt32(compressedSize), decompressedSize: UInt32(decompressedSize),
                     checksum: checksum))
    }

    /// Adds an entry known to fit, keeping the totals.
    private mutating func append(_ entry: Entry) {
        var entry = entry
        if !hasChecksums { entry.checksum = 0 }
        entries.append(entry)
        compressedTotal += Int(entry.compressedSize)
        decompressedTotal += Int(entry.decompressedSize)
    }

    /// The error for a table of more than ``maxFrames`` entries.
    private static func tooManyFrames(path: String) -> WeirError {
        WeirError.library(path: path, operation: .writeSeekTable,
                          "too many frames for a seek table (at most \(maxFrames))")
    }

    /// The size of one entry: 8 bytes, 12 with checksums.
    package var entrySize: Int { hasChecksums ? 12 : 8 }

    /// The size of the whole skippable frame ``encoded()`` returns.
    package var encodedSize: Int {
        Self.skippableHeaderSize + entries.count * entrySize + Self.footerSize
    }

    /// The file offset where the table's skippable frame begins: just past
    /// the last frame it describes.
    package var tableOffset: Int { dataStart + compressedTotal }

    /// The table as the bytes of its skippable frame, footer included, ready
    /// to be written after the last frame.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedSize)
        func put(_ value: UInt32) {
            bytes.append(contentsOf: [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                                      UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)])
        }
        put(Self.skippableMagic)
        put(UInt32(encodedSize - Self.skippableHeaderSize))
        for entry in entries {
            put(entry.compressedSize)
            put(entry.decompressedSize)
            if hasChecksums { put(entry.checksum) }
        }
        put(UInt32(entries.count))
        bytes.append(hasChecksums ? 0x80 : 0)
        put(Self.footerMagic)
        return bytes
    }

    /// Reads the seek table at the end of a file of `fileSize` bytes through
    /// `read`, which returns the `count` bytes at `offset` (fewer only where
    /// the file ends). The type reads no file itself: the index
    /// (``FrameListing``) and the decompression pipeline hand it their reads.
    ///
    /// Memory: the table is read 4096 entries at a time; the result holds
    /// 12 bytes per entry, which a hostile file can only make as large as
    /// the table bytes it really contains (at most ``maxFrames`` entries).
    ///
    /// - Returns: the table, with ``dataStart`` set; nil when the file does
    ///   not end with the seek table footer magic (or is shorter than 9
    ///   bytes). A table whose frames add up to more than the bytes before
    ///   it is returned with a negative ``dataStart``, not refused:
    ///   ``SeekTableCheck`` then finds the entry at fault by comparing the
    ///   entries with the frames, from the table backwards.
    /// - Throws: ``WeirError`` `.corrupt` when the footer magic is there but
    ///   the table is not valid: reserved descriptor bits set, more than
    ///   ``maxFrames`` frames or a table larger than the file, a skippable
    ///   header whose magic is not `0x184D2A5E` or whose size is not exactly
    ///   9 + entries × entry size. `.truncated` when `read` returns fewer
    ///   bytes than the table needs (the file is shorter than `fileSize`);
    ///   what `read` throws.
    package static func decode(fileSize: Int, path: String,
                       reading read: (_ count: Int, _ offset: Int) throws(WeirError) -> [UInt8])
        throws(WeirError) -> SeekTable? {
        /// Exactly `count` bytes at `offset`.
        func readBytes(count: Int, at offset: Int) throws(WeirError) -> [UInt8] {
            guard count > 0 else { return [] }
            let bytes = try read(count, offset)
            if bytes.count < count {
                throw WeirError.truncated(path: path, operation: .readSeekTable,
                                          "the file ends at offset \(offset + bytes.count), "
                                              + "before the end of its seek table (did it shrink?)")
            }
            return bytes
        }
        guard fileSize >= footerSize else { return nil }
        let footerOffset = fileSize - footerSize
        let footer = try readBytes(count: footerSize, at: footerOffset)
        guard littleEndian32(footer, 5) == footerMagic else { return nil }

        let descriptor = footer[4]
        if (descriptor >> 2) & 0x1F != 0 {
            throw corrupt("reserved bits set in the seek table descriptor \(FrameScanner.hex(descriptor)) "
                          + "at offset \(footerOffset + 4)", path: path)
        }
        let hasChecksums = descriptor & 0x80 != 0
        let count = Int(littleEndian32(footer, 0))
        let entrySize = hasChecksums ? 12 : 8
        if count > maxFrames {
            throw corrupt("the seek table footer at offset \(footerOffset) claims \(count) frames, "
                          + "more than the format's \(maxFrames)", path: path)
        }
        let frameSize = skippableHeaderSize + count * entrySize + footerSize
        if frameSize > fileSize {
            throw corrupt("the seek table footer at offset \(footerOffset) claims \(count) frames, a table of "
                          + "\(frameSize) bytes, larger than the \(fileSize)-byte file", path: path)
        }
        let tableOffset = fileSize - frameSize
        let header = try readBytes(count: skippableHeaderSize, at: tableOffset)
        let magic = littleEndian32(header, 0)
        if magic != skippableMagic {
            throw corrupt("the seek table of \(count) frames should begin at offset \(tableOffset) with the "
                          + "skippable magic \(FrameScanner.hex(skippableMagic)), not \(FrameScanner.hex(magic))",
                          path: path)
        }
        let declared = Int(littleEndian32(header, 4))
        if declared != frameSize - skippableHeaderSize {
            throw corrupt("the seek table's skippable frame at offset \(tableOffset) declares \(declared) bytes, "
                          + "but \(count) frames need \(frameSize - skippableHeaderSize)", path: path)
        }

        var table = SeekTable(hasChecksums: hasChecksums)
        table.entries.reserveCapacity(count)
        var position = tableOffset + skippableHeaderSize
        var remaining = count
        while remaining > 0 {
            let batch = min(remaining, entriesPerRead)
            let bytes = try readBytes(count: batch * entrySize, at: position)
            for index in 0 ..< batch {
                let base = index * entrySize
                table.append(Entry(compressedSize: littleEndian32(bytes, base),
                                   decompressedSize: littleEndian32(bytes, base + 4),
                                   checksum: hasChecksums ? littleEndian32(bytes, base + 8) : 0))
            }
            position += batch * entrySize
            remaining -= batch
        }
        table.dataStart = tableOffset - table.compressedTotal
        return table
    }

    /// The most bytes a zstd frame of `content` bytes of content takes,
    /// whatever wrote it: a header of at most 18 bytes, a checksum of 4,
    /// and blocks that each hold at least one byte, except one empty last
    /// block, a raw block costing its 3-byte header more than its content.
    /// It is 4 × content + 25: far above zstd's `ZSTD_compressBound`, which
    /// a frame written with a flush every few bytes (a log writer's) passes.
    package static func mostCompressed(content: Int) -> Int { 4 * content + 25 }

    /// The most content a zstd frame of `compressed` bytes holds: each
    /// 3-byte block header stands for at most 128 KiB (an RLE block).
    package static func mostContent(compressed: Int) -> Int { compressed * 43_691 }

    /// Why no zstd frame can have the sizes `entry` lists (the entry
    /// `number`, from 0), from the sizes alone; nil when one can. Only for
    /// an entry whose frame is not skippable: a skippable frame (of any
    /// size, no content) is what an entry of 0 bytes of content usually is.
    package static func impossibility(of entry: Entry, number: Int) -> String? {
        let compressed = Int(entry.compressedSize), content = Int(entry.decompressedSize)
        if compressed > mostCompressed(content: content) {
            return "entry \(number) lists \(compressed) compressed bytes for \(content) bytes of content, "
                + "more than any zstd frame takes for it (at most \(mostCompressed(content: content)))"
        }
        if content > mostContent(compressed: compressed) {
            return "entry \(number) lists \(content) bytes of content for \(compressed) compressed bytes, "
                + "more than any zstd frame of that size holds (at most \(mostContent(compressed: compressed)))"
        }
        return nil
    }

    /// A `.corrupt` error for a bad table.
    static func corrupt(_ detail: String, path: String) -> WeirError {
        WeirError.corruptSeekTable(path: path, detail)
    }

    /// The little-endian u32 at `index` of `bytes`.
    private static func littleEndian32(_ bytes: [UInt8], _ index: Int) -> UInt32 {
        UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
            | UInt32(bytes[index + 3]) << 24
    }
}
