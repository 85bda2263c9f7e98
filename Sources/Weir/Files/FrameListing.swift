#if canImport(Glibc)
import Glibc
#endif

/// What `weir -l` shows of one compressed file: its frames, without decoding.
///
/// When the file ends with a seek table that describes it from offset 0, the
/// listing comes from the table and the first frame's header alone (two
/// `pread`s, whatever the file's size); otherwise the file is read once
/// through a ``FrameScanner``, which walks frame and block headers.
public struct FrameListing: Sendable {
    /// One frame of the file.
    public struct Frame: Sendable, Equatable {
        /// Its position in the file, from 0 (skippable frames count).
        public var index: Int
        /// The offset of its first byte.
        public var offset: Int
        /// Its size in the file.
        public var compressedSize: Int
        /// The size of its content: from the seek table, or as its header
        /// declares; nil when unknown. 0 for skippable frames.
        public var decompressedSize: Int?
        /// Whether it is a skippable frame.
        public var isSkippable: Bool
        /// Its content checksum, when it has one and it is known.
        public var checksum: UInt32?
        /// Whether it ends with a content checksum.
        public var hasChecksum: Bool
    }

    /// The file, as given.
    public var path: String
    /// Its size in bytes.
    public var fileSize: Int
    /// Every frame, in file order (the seek table's own frame included).
    public var frames: [Frame]
    /// Whether the figures come from a seek table.
    public var fromSeekTable: Bool

    /// zstd frames.
    public var zstdFrameCount: Int { frames.count(where: { !$0.isSkippable }) }
    /// Skippable frames.
    public var skippableFrameCount: Int { frames.count(where: { $0.isSkippable }) }
    /// The content size, when every zstd frame's is known.
    public var decompressedSize: Int? {
        var total = 0
        for frame in frames where !frame.isSkippable {
            guard let size = frame.decompressedSize else { return nil }
            total += size
        }
        return total
    }
    /// Whether the zstd frames carry content checksums (all of them, when
    /// there is at least one).
    public var hasChecksum: Bool {
        let zstd = frames.filter { !$0.isSkippable }
        return !zstd.isEmpty && zstd.allSatisfy(\.hasChecksum)
    }

    /// Lists the frames of the file at `path`.
    ///
    /// - Throws: ``WeirError``: the file cannot be opened or read, is not a
    ///   regular file, is not zstd, is truncated or corrupt (naming the frame
    ///   and offset).
    public static func read(path: String) throws(WeirError) -> FrameListing {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw WeirError.system(errno, path: path, operation: "open") }
        defer { close(fd) }
        guard case .regularFile(let size) = InputKind.of(fd) else {
            throw WeirError(.notRegularFile, path: path, operation: "list", reason: "not a regular file")
        }
        if let table = try? SeekTable.read(from: fd, fileSize: size, path: path), table.dataStart == 0,
           let listing = try fromTable(table, fd: fd, fileSize: size, path: path) {
            return listing
        }
        return try scanned(fd: fd, fileSize: size, path: path)
    }

    /// The listing from a seek table, checking the first frame's header
    /// (for the checksum flag); nil when that header is not a zstd frame
    /// where the table says (then the file is scanned instead).
    private static func fromTable(_ table: SeekTable, fd: Int32, fileSize: Int,
                                  path: String) throws(WeirError) -> FrameListing? {
        var hasChecksum = table.hasChecksums
        if let first = table.frames().first {
            var header = [UInt8](repeating: 0, count: min(18, first.compressedSize))
            let got = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(first.compressedOffset)) }
            guard got == header.count else { return nil }
            var scanner = FrameScanner(path: path, operation: "list")
            let parsed: FrameHeader?
            let fed = header.withUnsafeBytes { bytes in
                Result { () throws(WeirError) in try scanner.feed(bytes) }
            }
            guard case .success = fed else { return nil }
            parsed = scanner.currentHeader
            guard let parsed, !parsed.isSkippable else { return nil }
            hasChecksum = parsed.hasChecksum
        }
        var frames: [Frame] = table.frames().map { frame in
            Frame(index: frame.index, offset: frame.compressedOffset, compressedSize: frame.compressedSize,
                  decompressedSize: frame.decompressedSize, isSkippable: false, checksum: frame.checksum,
                  hasChecksum: hasChecksum)
        }
        frames.append(Frame(index: frames.count, offset: table.tableOffset, compressedSize: fileSize - table.tableOffset,
                            decompressedSize: 0, isSkippable: true, checksum: nil, hasChecksum: false))
        return FrameListing(path: path, fileSize: fileSize, frames: frames, fromSeekTable: true)
    }

    /// The listing from reading the whole file through a scanner.
    private static func scanned(fd: Int32, fileSize: Int, path: String) throws(WeirError) -> FrameListing {
        var scanner = FrameScanner(path: path, operation: "list")
        var frames: [Frame] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw WeirError.system(errno, path: path, operation: "read")
            }
            if got == 0 { break }
            offset += got
            let found = try buffer.withUnsafeBytes { bytes in
                Result { () throws(WeirError) in try scanner.feed(UnsafeRawBufferPointer(rebasing: bytes[0 ..< got])) }
            }.get()
            for boundary in found {
                let skippable = boundary.header.isSkippable
                frames.append(Frame(index: boundary.index, offset: boundary.offset,
                                    compressedSize: boundary.compressedSize,
                                    decompressedSize: skippable ? 0 : boundary.header.contentSize.map { Int($0) },
                                    isSkippable: skippable, checksum: boundary.contentChecksum,
                                    hasChecksum: boundary.header.hasChecksum))
            }
        }
        try scanner.finish()
        if offset == 0 {
            throw WeirError(.notZstd, path: path, operation: "list", reason: "not in zstd format (empty file)")
        }
        return FrameListing(path: path, fileSize: offset, frames: frames, fromSeekTable: false)
    }
}
