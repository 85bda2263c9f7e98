import Glibc
import SystemPackage
import WeirFormats
import WeirPipeline
import WeirSystem

/// The index of one compressed file: its frames, without decoding. `weir -l`
/// shows it, ``SeekableReader`` reads through it, ``SeekTableAppender``
/// writes a table of it; its ``Frame`` is the one frame type of random
/// access, whether it comes from a seek table, a scan or a measurement
/// (`measured(in:options:dictionary:wholeFrameLimit:)`).
///
/// When the file ends with a seek table that describes it from offset 0, the
/// listing comes from the table, checked against each frame's header and
/// stored checksum (one small `pread` per frame, the body is not read), or,
/// for a reader that checks each frame it decodes (``SeekableReader``),
/// taken as the table gives it (no read per frame); otherwise the file is
/// read once through a ``FrameScanner``, which walks frame and block
/// headers. A table that does not match the frames is not used: the file is
/// scanned, and ``warnings`` says how the table differs.
package struct FrameListing: Sendable {
    /// One frame of the file: where it lies, and what its header or its
    /// table entry says of it.
    package struct Frame: Sendable, Equatable {
        /// Its position in the file, from 0 (skippable frames count).
        package var index: Int
        /// The offset of its first byte.
        package var offset: Int
        /// Its size in the file.
        package var compressedSize: Int
        /// The size of its content: from the seek table, or as its header
        /// declares; nil when unknown. 0 for skippable frames.
        package var decompressedSize: Int?
        /// Whether it is a skippable frame.
        package var isSkippable: Bool
        /// Its content checksum, when it has one and it is known.
        package var checksum: UInt32?
        /// Whether it ends with a content checksum.
        package var hasChecksum: Bool
        /// The window its header declares; 0 for skippable frames.
        package var windowSize: UInt64 = 0
        /// The dictionary ID its header names; 0 for none and for skippable frames.
        package var dictionaryID: UInt32 = 0
        /// Whether ``decompressedSize`` comes from a seek table alone (the
        /// header declares none: zstd from a pipe, the seekable library):
        /// taken, and checked whenever the frame is decoded (`weir -t`
        /// checks every one; `weir --index` before it vouches for them).
        package var sizeFromTableOnly = false
        /// Whether it was taken from a seek table without reading its
        /// header (``read(_:table:trustingTable:)``): its header, its size
        /// and its checksum are checked against the entry when it is decoded.
        /// Its ``hasChecksum``, ``windowSize`` and ``dictionaryID`` are then
        /// the table's guess (checksums when the table has them), not the header's.
        package var headerUnread = false
    }

    /// The file, as given.
    package var path: String
    /// Its size in bytes.
    package var fileSize: Int
    /// Every frame, in file order (the seek table's own frame included).
    package var frames: [Frame]
    /// Whether the figures come from a seek table.
    package var fromSeekTable: Bool
    /// The seek tables the figures come from: 1 for a seekable file, one per
    /// part for a concatenation of them; 0 when the frames were scanned.
    package var seekTables = 0
    /// The bytes at the start of the file that were scanned because no
    /// table describes them (a concatenation whose first parts have no
    /// table); 0 when the tables describe the whole file.
    package var scannedPrefix = 0
    /// Things the user should know, each a sentence without the file's name:
    /// a seek table that does not match the frames (the listing then comes
    /// from scanning them).
    package var warnings: [String] = []
    /// How the file's seek table disagrees with its frames, when it ends
    /// with one that does (then ignored: the frames were scanned).
    package var tableMismatch: String?

    /// The zstd frames whose content size comes from a seek table alone
    /// (their headers declare none): checked only when decoded.
    package var tableOnlySizes: [Frame] { frames.filter(\.sizeFromTableOnly) }
    /// zstd frames.
    package var zstdFrameCount: Int { frames.count(where: { !$0.isSkippable }) }
    /// Skippable frames.
    package var skippableFrameCount: Int { frames.count(where: { $0.isSkippable }) }
    /// The content size, when every zstd frame's is known.
    package var decompressedSize: Int? {
        var total = 0
        for frame in frames where !frame.isSkippable {
            guard let size = frame.decompressedSize else { return nil }
            total += size
        }
        return total
    }
    /// Whether the zstd frames carry content checksums (all of them, when
    /// there is at least one).
    package var hasChecksum: Bool {
        let zstd = frames.filter { !$0.isSkippable }
        return !zstd.isEmpty && zstd.allSatisfy(\.hasChecksum)
    }

    /// The listing with every zstd frame's ``Frame/decompressedSize`` known:
    /// as its header or table declares it, or, for the frames that declare
    /// none, measured by decoding them side by side
    /// (``FrameMeasure/contentSizes(of:in:options:dictionary:wholeFrameLimit:)``).
    ///
    /// - Returns: the listing, and how many frames were measured.
    /// - Throws: as ``FrameMeasure/contentSizes(of:in:options:dictionary:wholeFrameLimit:)``.
    func measured(in file: Descriptor, options: DecompressionOptions, dictionary: DecompressionDictionary? = nil,
                  wholeFrameLimit: Int = SeekableReader.cacheableFrameSize)
        throws(WeirError) -> (listing: FrameListing, measured: Int) {
        let unsized = frames.indices.filter { !frames[$0].isSkippable && frames[$0].decompressedSize == nil }
        let sizes = try FrameMeasure.contentSizes(of: unsized.map { frames[$0] }, in: file, options: options,
                                                  dictionary: dictionary, wholeFrameLimit: wholeFrameLimit)
        var listing = self
        for (index, size) in zip(unsized, sizes) { listing.frames[index].decompressedSize = size }
        return (listing, unsized.count)
    }

    /// Lists the frames of the file at `path`.
    ///
    /// - Throws: `WeirError`: the file cannot be opened or read, is not a
    ///   regular file, is not zstd, is truncated or corrupt (naming the frame
    ///   and offset).
    /// With `windowShown` (`-lv`), a remote file's last frame header is read
    /// too (``readLastHeader(in:)``).
    package static func read(path: String, windowShown: Bool = false) throws(WeirError) -> FrameListing {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        var listing = try read(file)
        if windowShown, file.source != nil { try listing.readLastHeader(in: file) }
        return listing
    }

    /// The window and dictionary of the last zstd frame (what `-lv`
    /// shows) from its header, in a listing of a remote file taken from its
    /// table: one small read (a request), not one per frame. A header that
    /// does not parse leaves the table's guess (decoding it fails).
    mutating func readLastHeader(in file: Descriptor) throws(WeirError) {
        guard let last = frames.lastIndex(where: { !$0.isSkippable && $0.headerUnread }) else { return }
        let head = try file.read(count: min(18, frames[last].compressedSize), at: frames[last].offset,
                                 operation: .list)
        guard let header = head.withUnsafeBytes({ FrameHeader(startOf: $0) }) else { return }
        frames[last].windowSize = header.windowSize
        frames[last].dictionaryID = header.dictionaryID
    }

    /// Lists the frames of `file`, open for reading; `known` is the seek
    /// table at its end when the caller has read it already (it is not
    /// read again), nil to read it here.
    ///
    /// With `trustingTable`, the frames of a file whose tables describe it
    /// are taken from the tables alone (``Frame/headerUnread``), refused
    /// only for what the entries themselves rule out; without, each entry is
    /// checked against its frame's header and stored checksum first (`-l`).
    ///
    /// With `walkingBlocks` too (a mount), each entry's compressed size must
    /// also be where its frame ends, found by walking the frame's block
    /// headers (3 bytes a block): an entry that ends inside its frame, where
    /// the frame's data happens to hold another frame, would otherwise serve
    /// that frame's content in the place of the rest of its own.
    ///
    /// A remote file (a ``Descriptor`` on a ``PositionalSource``) is always
    /// read trusting its table: checking each entry would be a request per
    /// frame; its frames are checked when decoded (`-t`, a read).
    ///
    /// - Throws: as ``read(path:windowShown:)``.
    package static func read(_ file: Descriptor, table known: SeekTable? = nil, trustingTable: Bool = false,
                             walkingBlocks: Bool = false) throws(WeirError) -> FrameListing {
        let path = file.path
        let trustingTable = trustingTable || file.source != nil
        // A file of a file system whose sizes are not its files' (procfs)
        // cannot be listed by its size; an empty file lists as empty.
        let status = try file.status(operation: .list)
        guard status.isRegularFile, !InputKind.sizeIsUntrusted(file) else {
            throw WeirError.notRegularFile(path: path, operation: .list)
        }
        let size = status.size
        var table = known
        var tableError: WeirError?
        if known == nil {
            do throws(WeirError) {
                table = try SeekTable.entriesAtEnd(of: file, fileSize: size)
            } catch {
                tableError = error
            }
        }
        if let table, table.dataStart >= 0 {
            // A concatenation of seekable files: each part's table lists its own frames.
            // Frames before the first table's are scanned (a part without a table).
            let chain = seekTableChain(endingWith: table, in: file)
            let start = chain[0].dataStart
            var none = SeekTableCheck(table: nil, readError: nil, fileSize: start)
            let prefix = start == 0 ? []
                : (try? scanned(file, fileSize: start, check: &none, end: start))?.frames
            if let prefix, var listing = try fromTables(chain, after: prefix, in: file, fileSize: size,
                                                        trusting: trustingTable, walkingBlocks: walkingBlocks) {
                listing.scannedPrefix = start
                return listing
            }
        }
        var check = SeekTableCheck(table: table, readError: tableError, fileSize: size)
        var listing = try scanned(file, fileSize: size, check: &check)
        if let mismatch = check.mismatch {
            listing.tableMismatch = mismatch.detail
            listing.warnings.append("seek table does not match the frames; ignoring it (\(mismatch.detail))")
        }
        return listing
    }

    /// The listing from reading the file (up to `end`) through a scanner,
    /// every frame also going through the seek table's `check`.
    static func scanned(_ descriptor: Descriptor, fileSize: Int, check: inout SeekTableCheck,
                        end: Int = .max) throws(WeirError) -> FrameListing {
        let path = descriptor.path
        var scanner = FrameScanner(path: path, operation: .list)
        // Data that is not zstd after the frames (another format, as zstd
        // would decode it, or anything): not zstd, as `zstd -l` says.
        scanner.tailPolicy = .anything
        var frames: [Frame] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while offset < end {
            let got = try buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(WeirError) in
                    try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes.prefix(end - offset)),
                                        at: offset, operation: .read)
                }
            }.get()
            if got == 0 || scanner.tailStart != nil { break }
            offset += got
            let found = try buffer.withUnsafeBytes { bytes in
                Result { () throws(WeirError) in try scanner.feed(UnsafeRawBufferPointer(rebasing: bytes[0 ..< got])) }
            }.get()
            for boundary in found {
                _ = check.frameFound(boundary)
                let skippable = boundary.header.isSkippable
                // A declared size beyond what the frame's blocks can hold is
                // corrupt (the decoder refuses it too); refused here, it can
                // neither trap as an Int nor overflow the total.
                let bound = boundary.contentBound
                if !skippable, let declared = boundary.header.contentSize, declared > UInt64(bound) {
                    throw WeirError.corrupt(path: path, operation: .list,
                                            "declares \(declared) bytes of content, more than its "
                                                + "\(boundary.blockCount) blocks can hold (\(bound))",
                                            frame: boundary.index, offset: boundary.offset)
                }
                frames.append(Frame(index: boundary.index, offset: boundary.offset,
                                    compressedSize: boundary.compressedSize,
                                    decompressedSize: skippable ? 0 : boundary.header.contentSize.map { Int($0) },
                                    isSkippable: skippable, checksum: boundary.contentChecksum,
                                    hasChecksum: boundary.header.hasChecksum, windowSize: boundary.header.windowSize,
                                    dictionaryID: boundary.header.dictionaryID))
            }
        }
        try scanner.finish()
        if let start = scanner.tailStart {
            throw WeirError.notZstd(path: path, operation: .list,
                                    "the data at offset \(start), after frame \(frames.count - 1), is not zstd")
        }
        check.finish()
        if offset == 0 {
            throw WeirError.notZstd(path: path, operation: .list, "empty file")
        }
        return FrameListing(path: path, fileSize: offset, frames: frames, fromSeekTable: false)
    }
}
