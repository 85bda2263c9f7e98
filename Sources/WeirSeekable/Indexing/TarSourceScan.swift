import Dispatch
import WeirFiles
import WeirPipeline
import WeirSystem
import WeirTar

/// `weir --index --index-from=TAR FILE`: the member index of FILE's content
/// made from TAR, a file said to hold that content (the tar FILE's frames
/// were compressed from, as `weir.dask`'s join has it), rather than by
/// decoding FILE once (``TarContentScan``).
///
/// TAR is taken only once it is shown to be FILE's content: its size is
/// the frames' content sizes' sum, and each frame's range of it hashes
/// (XXH64, seed 0, the low 32 bits) to the content checksum the frame
/// stores, which a decode of the frame would check too. So every zstd frame
/// must declare or be measured a content size, and store a checksum (weir
/// writes both). The hashes read TAR from the page cache, the frames side
/// by side (`concurrentPerform`), at a fraction of a decode's cost; beside
/// them, one more job walks TAR's header blocks with a ``TarScanner``, read
/// by `pread` (its data stepped over, as a resumed run walks its kept
/// part: ``MemberIndexRecorder``).
///
/// Memory: each hash maps its frame's range (``ContentHash``); the walk
/// holds one small read buffer and the index so far.
package enum TarSourceScan {
    /// The member index of the content of `listing`'s frames, from the file
    /// at `source`, compressed at `level` (``MemberIndex/level(forRunLevel:)``);
    /// nil when that content is not a whole tar.
    ///
    /// - Parameter listing: the frames of the file indexed, every zstd
    ///   frame's ``FrameListing/Frame/decompressedSize`` known
    ///   (``FrameListing/measured(in:options:dictionary:wholeFrameLimit:)``).
    /// - Throws: `WeirError`: `.sourceMismatch` when a frame has no size or
    ///   no checksum, when `source` is not as large as the content or a
    ///   frame's checksum does not match its bytes; `.notRegularFile` when
    ///   `source` is not a regular file; a read's error.
    static func index(of listing: FrameListing, source: String, level: Int) throws(WeirError) -> TarScanner.Found? {
        var ranges: [(frame: FrameListing.Frame, range: Range<Int>, checksum: UInt32)] = []
        var content = 0
        for frame in listing.frames where !frame.isSkippable {
            guard let size = frame.decompressedSize, let checksum = frame.checksum, frame.hasChecksum else {
                throw WeirError.sourceMismatch(
                    file: listing.path, source: source,
                    .unchecked(frame: frame.index, offset: frame.offset, size: frame.decompressedSize == nil))
            }
            ranges.append((frame, content ..< content + size, checksum))
            content += size
        }
        // A FIFO is refused before it is opened, which would wait for a writer.
        if let status = FileStatus.of(path: source), !status.isRegularFile {
            throw WeirError.notRegularFile(path: source, operation: .readMemberIndex)
        }
        let tar = try Descriptor.openForReading(source, operation: .open)
        defer { tar.close() }
        let status = try tar.status(operation: .readMemberIndex)
        guard tar.source == nil, status.isRegularFile, !InputKind.sizeIsUntrusted(tar) else {
            throw WeirError.notRegularFile(path: source, operation: .readMemberIndex)
        }
        guard status.size == content else {
            throw WeirError.sourceMismatch(file: listing.path, source: source,
                                           .size(source: status.size, content: content))
        }
        let (frames, size) = (ranges, content)
        // Job 0 walks the headers (the longest job, started first); job i
        // hashes frame i - 1. Each records its outcome in its own slot.
        let walk = Locked<Result<TarScanner?, WeirError>>(.success(nil))
        let hashes = Locked<[Int: Result<UInt64?, WeirError>]>([:])
        DispatchQueue.concurrentPerform(iterations: frames.count + 1) { job in
            guard job > 0 else {
                let scanned = Result { () throws(WeirError) in try walkHeaders(of: tar, size: size, level: level) }
                walk.withLock { $0 = scanned }
                return
            }
            let range = frames[job - 1].range
            let hash = Result { () throws(WeirError) in
                try ContentHash.of(tar, count: range.count, at: range.lowerBound, operation: .readMemberIndex)
            }
            hashes.withLock { $0[job - 1] = hash }
        }
        // Read twice (hashed, walked), side by side: a TAR written meanwhile may give each other bytes.
        let after = try tar.status(operation: .readMemberIndex)
        if status.mayHaveChanged(by: after) {
            throw WeirError.changedWhileRead(path: source, operation: .readMemberIndex,
                                             shrank: after.size < status.size, changed: true)
        }
        let found = hashes.withLock { $0 }
        for (number, entry) in ranges.enumerated() {
            // nil: the file holds fewer bytes than it did (cut meanwhile).
            guard let hash = try found[number]?.get(), UInt32(truncatingIfNeeded: hash) == entry.checksum else {
                throw WeirError.sourceMismatch(
                    file: listing.path, source: source,
                    .checksum(frame: entry.frame.index, offset: entry.frame.offset, range: entry.range))
            }
        }
        guard let scanner = try walk.withLock({ $0 }).get() else { return nil }
        return try scanner.finish(contentSize: content, path: source)
    }

    /// The scan of the `size` bytes of `tar`, walked through their header
    /// blocks; nil when they do not start as a tar.
    private static func walkHeaders(of tar: Descriptor, size: Int, level: Int) throws(WeirError) -> TarScanner? {
        let head = try tar.read(count: min(size, 512), at: 0, operation: .readMemberIndex)
        guard head.withUnsafeBytes({ TarScanner.startsTar($0) }) else { return nil }
        let scanner = TarScanner(level: level)
        try scanner.feed(upTo: size) { (at, buffer) throws(WeirError) in
            try tar.read(into: buffer, at: at, operation: .readMemberIndex)
        }
        return scanner
    }
}
