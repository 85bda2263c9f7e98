import FoundationEssentials
import Glibc
import SystemPackage
import WeirFormats
import WeirPipeline
import WeirSystem

/// Random access to the decompressed content of a zstd file: any byte range,
/// reading and decoding only the frames that hold it.
///
/// The frames are indexed once, when the reader is made: from the file's
/// seek table when it has one (weir's outputs, and concatenations of them
/// through each part's table), reading the footer and the table and no
/// frame (issue 71), otherwise by walking frame and block headers, which
/// reads the compressed bytes but decodes nothing (pzstd's files, zstd's
/// with content sizes). The table is taken as the seekable format means
/// (zstd's contrib reader, indexed_zstd, pyzstd do the same) once what its
/// entries alone refute is ruled out (sizes no frame can have, entries past the file),
/// and every frame decoded is checked against its entry before any of its
/// bytes go out: a zstd frame header where the entry starts, declaring the
/// entry's content size or none, the checksum it stores the entry's (unless
/// checksums are not verified), and exactly the entry's content decoded.
/// One that fails fails the read, naming the frame and its offset. A frame
/// whose end falls inside a range is decoded to its end, so that no range
/// joins bytes across a boundary the table put in the wrong place. Without
/// a table, frames that declare no size are decoded once, side by side on
/// the options' threads, to measure them. A table that lies about the
/// content size of a frame no read decodes is not seen (the content after
/// it is shifted): `weir -t` decodes every frame and finds it, `weir -l`
/// reads every header, and a tar member's header blocks must be the member's.
///
/// Reading decodes each frame that the range touches, and no byte of a
/// frame goes out before the frame's check passed (issue 59): verifying
/// checksums, every frame a read touches is decoded to its end. A frame of
/// up to `cacheableFrameSize` is decoded whole, in one call into memory of
/// its own, and kept, the last `cachedFrames` of them, so that neighbouring
/// reads decode nothing again. A larger frame is streamed from its start to
/// its end, holding the range's bytes until then (at most
/// `cacheableFrameSize` of them; more, and the frame is streamed once to
/// verify it, then again for the range). Without checksum verification
/// (`--no-check`, as zstd's), the first read that ends inside a frame
/// streams it and leaves it as soon as the range is covered; a frame of up
/// to `cacheableFrameSize` read again, or read to its end, is decoded whole
/// and kept. Memory:
/// at most `cachedFrames` × `cacheableFrameSize` of decoded frames, and a
/// frame's compressed bytes while it is decoded.
///
/// The reader is safe to share across threads and tasks: reads go on at
/// once, each with its own libzstd context; the cache is behind a lock.
public final class SeekableReader: Sendable {
    /// The decoded frames kept, most recent last; the frames streamed
    /// lately (a second read decodes them whole).
    struct Cache {
        var frames: [(index: Int, bytes: [UInt8])] = []
        var streamed: [Int] = []

        /// Whether frame `index` was streamed lately; it is noted if not.
        mutating func streamedBefore(_ index: Int) -> Bool {
            if streamed.contains(index) { return true }
            streamed.append(index)
            if streamed.count > 16 { streamed.removeFirst() }
            return false
        }
    }

    /// How many decoded frames are kept.
    package static let cachedFrames = 2
    /// The largest frame decoded whole and kept: 64 MiB (weir's frames are
    /// 8 MiB by default).
    package static let cacheableFrameSize = 64 << 20
    /// The largest frame decoded whole (or measured whole): this reader's
    /// `cacheableFrameSize` (smaller in tests, to stream), or, in a file of
    /// one frame, its `loneFrameLimit` when smaller (`--range`'s: issue 81).
    let wholeFrameLimit: Int
    /// The most bytes of a range held until its frame's check passed: the
    /// reader's `cacheableFrameSize`.
    let heldLimit: Int

    /// The file, as given.
    public let path: String
    /// The size of the decompressed content.
    public let count: Int
    /// Whether the frames were indexed from a seek table.
    public let indexedFromSeekTable: Bool
    /// Things the user should know, as sentences without the file's name (a
    /// seek table that does not match the frames, and was ignored).
    public let warnings: [String]
    package let file: Descriptor
    /// Whether the reader opened `file` (and so closes it).
    private let ownsFile: Bool
    /// The zstd frames, each with its ``FrameListing/Frame/decompressedSize`` known.
    package let frames: [FrameListing.Frame]
    /// Where each frame's content starts in the file's content, then the
    /// content's end: frame `i` holds `contentStarts[i] ..< contentStarts[i + 1]`.
    let contentStarts: [Int]
    package let options: DecompressionOptions
    let dictionary: DecompressionDictionary?
    let cache = Locked(Cache())

    /// Opens `path` and indexes its frames.
    ///
    /// - Parameters:
    ///   - path: a regular file of zstd frames (and skippable frames).
    ///   - options: the checksum check, the memory limit of a frame's window
    ///     when it is streamed, and the dictionary.
    /// - Throws: `WeirError`: the file cannot be read, is not a regular
    ///   file, is not zstd, is truncated or corrupt.
    public convenience init(path: String, options: DecompressionOptions = DecompressionOptions()) throws(WeirError) {
        try self.init(path: path, options: options, wholeFrameLimit: Self.cacheableFrameSize)
    }

    /// Opens `path`, decoding frames of up to `wholeFrameLimit` whole, or
    /// up to `loneFrameLimit` when the file holds one frame: a range of one
    /// large frame then streams through its window, its bytes held, rather
    /// than the frame decoded whole into memory of its size.
    convenience init(path: String, options: DecompressionOptions, wholeFrameLimit: Int,
                     loneFrameLimit: Int? = nil) throws(WeirError) {
        try self.init(path: path, options: options, wholeFrameLimit: wholeFrameLimit, loneFrameLimit: loneFrameLimit,
                      checkingTable: false)
    }

    /// Opens `path`; with `checkingTable`, its seek table checked first, as
    /// ``init(file:table:options:checkingTable:)`` checks it.
    package convenience init(path: String, options: DecompressionOptions, checkingTable: Bool) throws(WeirError) {
        try self.init(path: path, options: options, wholeFrameLimit: Self.cacheableFrameSize, loneFrameLimit: nil,
                      checkingTable: checkingTable)
    }

    /// Opens `path`, decoding frames of up to `wholeFrameLimit` whole (`loneFrameLimit`: above).
    private convenience init(path: String, options: DecompressionOptions, wholeFrameLimit: Int,
                             loneFrameLimit: Int?, checkingTable: Bool) throws(WeirError) {
        let file = try Descriptor.openForReading(path)
        do throws(WeirError) {
            try self.init(file: file, table: nil, ownsFile: true, options: options, wholeFrameLimit: wholeFrameLimit,
                          loneFrameLimit: loneFrameLimit, checkingTable: checkingTable)
        } catch {
            file.close()
            throw error
        }
    }

    /// Reads the content of `file`, open for reading, whose seek table
    /// `table` its caller has read already (nil: read here). The caller
    /// keeps `file` open for as long as the reader lives, and closes it.
    ///
    /// With `checkingTable` (a mount, which serves any frame's bytes without
    /// decoding the frames before it), the table is checked against the
    /// frames first, when the file is local: each entry's offset must hold a
    /// zstd frame header declaring the entry's content size, if it declares
    /// one, ending where the entry ends (its block headers walked) with the
    /// entry's checksum (``FrameListing/read(_:table:trustingTable:walkingBlocks:)``).
    /// A table that does not match is ignored, as `weir -d` and `-l` ignore
    /// it: the frames are scanned (and those that declare no size measured),
    /// and ``warnings`` says so. A frame whose header declares no size keeps
    /// its entry's until decoded (``FrameCache`` decodes it before serving
    /// any byte after it).
    package convenience init(file: Descriptor, table: SeekTable?, options: DecompressionOptions,
                             checkingTable: Bool) throws(WeirError) {
        try self.init(file: file, table: table, ownsFile: false, options: options,
                      wholeFrameLimit: Self.cacheableFrameSize, checkingTable: checkingTable)
    }

    /// Reads `file`, which the reader closes when it goes when `ownsFile`.
    private init(file: Descriptor, table: SeekTable?, ownsFile: Bool, options: DecompressionOptions,
                 wholeFrameLimit: Int, loneFrameLimit: Int? = nil, checkingTable: Bool) throws(WeirError) {
        // Unless checked, the table's entries are taken as it gives them (no
        // frame header is read to open); each frame is checked against its entry when decoded.
        let listing = try FrameListing.read(file, table: table, trustingTable: !checkingTable,
                                            walkingBlocks: checkingTable)
        let lone = listing.frames.lazy.filter { !$0.isSkippable }.count == 1
        let decodedWhole = lone ? min(wholeFrameLimit, loneFrameLimit ?? wholeFrameLimit) : wholeFrameLimit
        self.wholeFrameLimit = decodedWhole
        self.heldLimit = wholeFrameLimit
        self.file = file
        self.ownsFile = ownsFile
        self.path = file.path
        self.options = options
        dictionary = try options.dictionary.map { d throws(WeirError) in try DecompressionDictionary(d) }
        frames = try listing.measured(in: file, options: options, dictionary: dictionary,
                                      wholeFrameLimit: decodedWhole).listing.frames.filter { !$0.isSkippable }
        var starts = [0]
        starts.reserveCapacity(frames.count + 1)
        for frame in frames { starts.append(starts[starts.count - 1] + (frame.decompressedSize ?? 0)) }
        contentStarts = starts
        count = starts[starts.count - 1]
        indexedFromSeekTable = listing.fromSeekTable
        warnings = listing.warnings
    }

    deinit { if ownsFile { file.close() } }

    /// The zstd frames of the file.
    public var frameCount: Int { frames.count }

    /// The bytes of the content from `offset`, `count` of them.
    ///
    /// - Throws: `WeirError` `.outOfRange` when the range ends past
    ///   ``count``; `.corrupt`, `.checksumMismatch`, `.truncated` for bad data.
    public func read(at offset: Int, count: Int) throws(WeirError) -> Data {
        var data = Data()
        data.reserveCapacity(max(0, count))
        _ = try read(offset ..< offset + max(0, count)) { piece throws(WeirError) in data.append(contentsOf: piece) }
        return data
    }

    /// The bytes of `range` of the content, in pieces handed to `body` in
    /// order (each valid only during the call).
    ///
    /// - Returns: how many frames the range touched.
    /// - Throws: `WeirError` `.outOfRange` when the range ends past
    ///   ``count`` (before `body` is called), an error of decoding, or what
    ///   `body` throws.
    @discardableResult
    public func read(_ range: Range<Int>,
                     _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) -> Int {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw WeirError.outOfRange(path: path, range: range, size: count)
        }
        guard !range.isEmpty else { return 0 }
        var index = firstFrame(containing: range.lowerBound)
        if file.source != nil { try prefetch(from: index, to: range.upperBound) }
        var touched = 0
        while index < frames.count, contentStarts[index] < range.upperBound {
            let start = contentStarts[index], size = contentStarts[index + 1] - start
            let inner = max(range.lowerBound, start) - start ..< min(range.upperBound, start + size) - start
            if !inner.isEmpty {
                touched += 1
                // Checked, a frame is decoded to its end anyway: whole, in one call, is the same work less
                // libzstd's window and its copy out of it.
                if size <= wholeFrameLimit, options.verifyChecksum || inner.upperBound == size
                    || cache.withLock({ $0.frames.contains { $0.index == index } || $0.streamedBefore(index) }) {
                    let bytes = try decodedWhole(index)
                    try bytes.withUnsafeBytes { all in
                        Result { () throws(WeirError) in try body(UnsafeRawBufferPointer(rebasing: all[inner])) }
                    }.get()
                } else if !options.verifyChecksum {
                    try stream(frames[index], size: size, inner, body)
                } else if inner.count <= heldLimit {
                    // No byte goes out before its frame's check passed (issue 59): the frame, too large to decode
                    // whole, is streamed to its end, the range's bytes held.
                    var held: [UInt8] = []
                    held.reserveCapacity(inner.count)
                    try stream(frames[index], size: size, inner, toEnd: true) { piece throws(WeirError) in
                        held.append(contentsOf: piece)
                    }
                    try held.withUnsafeBytes { all in
                        Result { () throws(WeirError) in try body(all) }
                    }.get()
                } else {
                    // Too many bytes to hold: the frame is verified first, then read.
                    try stream(frames[index], size: size, size ..< size, toEnd: true) { _ in }
                    try stream(frames[index], size: size, inner, body)
                }
            }
            index += 1
        }
        return touched
    }

    /// Decodes and keeps the frames that `range` of the content lies in, as
    /// a read of them to their end does, so that the read that follows finds
    /// them decoded: run on another thread while the caller still works out
    /// what to read. Nothing when the frames are more than are kept or larger
    /// than are kept whole, when checksums are not verified (a read then
    /// stops where its range ends), or from a remote source (whose requests a
    /// read merges). A failure is left to that read, which meets it again.
    package func warm(_ range: Range<Int>) {
        guard options.verifyChecksum, file.source == nil, range.lowerBound >= 0, range.upperBound <= count,
              !range.isEmpty else { return }
        let first = firstFrame(containing: range.lowerBound), last = firstFrame(containing: range.upperBound - 1)
        guard last - first < Self.cachedFrames else { return }
        for index in first ... last where contentStarts[index + 1] - contentStarts[index] <= wholeFrameLimit {
            _ = try? decodedWhole(index)
        }
    }

    /// The bytes of `range` of the content, as an asynchronous sequence of
    /// pieces of at most 1 MiB; the stream throws what ``read(_:_:)`` throws.
    public func bytes(in range: Range<Int>) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task.detached {
                do throws(WeirError) {
                    var from = range.lowerBound
                    while from < range.upperBound, !Task.isCancelled {
                        let to = min(range.upperBound, from + (1 << 20))
                        continuation.yield(try self.read(at: from, count: to - from))
                        from = to
                    }
                    if range.isEmpty { _ = try self.read(range) { _ throws(WeirError) in } }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The compressed bytes of the frames that `ranges` touch, a frame
    /// counted once per range.
    package func compressedBytes(touching ranges: [Range<Int>]) -> Int {
        var total = 0
        for range in ranges where !range.isEmpty {
            var index = firstFrame(containing: range.lowerBound)
            while index < frames.count, contentStarts[index] < range.upperBound {
                total += frames[index].compressedSize
                index += 1
            }
        }
        return total
    }

    // MARK: Frames

    /// Tells a remote source (``Descriptor/prefetch(_:)``) which frames a
    /// read of the content up to `end` decodes, from frame `index`, those kept
    /// decoded left out: it fetches them together, one request for
    /// neighbouring frames, instead of a request each.
    private func prefetch(from index: Int, to end: Int) throws(WeirError) {
        let decoded = cache.withLock { $0.frames.map(\.index) }
        var spans: [Range<Int>] = []
        var frame = index
        while frame < frames.count, contentStarts[frame] < end {
            if !decoded.contains(frame) {
                spans.append(frames[frame].offset ..< frames[frame].offset + frames[frame].compressedSize)
            }
            frame += 1
        }
        try file.prefetch(spans)
    }

    /// The index of the frame that holds content offset `offset` (binary search).
    private func firstFrame(containing offset: Int) -> Int {
        var low = 0, high = frames.count
        while low < high {
            let middle = (low + high) / 2
            if contentStarts[middle + 1] <= offset { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the frame that holds content offset `offset`
    /// (``frameCount`` when `offset` is the content's end or past it).
    package func frame(containing offset: Int) -> Int {
        offset >= count ? frames.count : firstFrame(containing: max(0, offset))
    }

    /// Where frame `index` lies in the content.
    /// Whether the file, `fileSize` bytes, is one zstd frame and nothing
    /// else (what `zstd` writes).
    package func isOneFrame(fileSize: Int) -> Bool {
        frames.count == 1 && frames[0].offset == 0 && frames[0].compressedSize == fileSize
    }

    package func contentRange(ofFrame index: Int) -> Range<Int> { contentStarts[index] ..< contentStarts[index + 1] }
}
