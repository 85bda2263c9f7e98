import Dispatch
import WeirFiles
import WeirFormats
import WeirSeekable
import WeirSystem

/// Decoded frames of a ``SeekableReader`` kept within a memory budget, for
/// readers that come back to the same frames in small pieces (`weir mount`:
/// the kernel reads a file 128 KiB at a time; docs/mount.md).
///
/// A read decodes only the frames that hold its bytes, each whole and
/// checked as ``SeekableReader/decodeFrame(_:)`` checks it (its listed
/// size, its checksum): only frames that passed are kept or handed on. Two
/// reads that need the same frame decode it once: the second waits for the
/// first. Reads of different frames decode at once, on their own threads.
/// When the budget is full, frames a read reached the end of go first (a
/// sequential reader is done with them; a read that goes back into one,
/// well before where reads of it reached, makes it unfinished again), least
/// recently used first, then
/// the others the same way.
///
/// Every decoded byte the cache's readers hold counts against the budget:
/// frames kept, frames being decoded (and their compressed input, read
/// whole for the decode), frames handed to a reader (which
/// are not dropped until it is done with them), and each stream's decoder
/// (its window and buffers). A read that needs more room than dropping
/// frames makes waits for it (frames being decoded and streams end, readers
/// finish with theirs), never passes it: a read waits holding nothing, so
/// it never waits for itself. One need larger than the whole budget (a
/// stream's window past `-M`) goes alone, when nothing else is held.
///
/// A frame larger than half the budget is never kept: a read streams it
/// through the reader into its own buffer, from the frame's start to the
/// read's end. The first read of such a frame streams it to its end, for
/// its checks (the checksum, its size); once they passed, the frame is
/// known good (the archive's identity is checked after each stream, as
/// after each decode), and later reads stop at their end.
///
/// A frame read ahead (``readAhead(after:)``) makes its room only of frames
/// read to their end, and leaves room for one frame more (a reader's next:
/// a frame being decoded cannot give way to it), or is not read ahead:
/// two sequential readers in a budget of three frames keep each its frame
/// and its next when they cross into it, rather than one reader's next
/// taking the frame the other is in (then every frame decoded again, as
/// often as the readers took turns). A read that needs room when no frame
/// is finished drops a frame read ahead and not read before a frame a
/// reader is in.
///
/// Safe to share across threads.
package final class FrameCache: Sendable {
    struct Entry {
        /// Nil while the frame is decoded.
        var bytes: [UInt8]?
        var lastUse: UInt64
        /// Where the furthest read of it ended (a content offset): it is
        /// finished once that is within ``finishedWithin`` of its end. A read
        /// that starts more than ``backJump`` before it goes back into the
        /// frame, and starts it again.
        var reached = 0
        /// Read since it was kept: false for a frame read ahead and not read yet.
        var read = true
        /// Readers holding its bytes now: it is not dropped until they are
        /// done (its memory would stay theirs, outside the budget).
        var pins = 0
    }

    struct State {
        var entries: [Int: Entry] = [:]
        /// The bytes the entries hold or will hold.
        var used = 0
        var clock: UInt64 = 0
        /// Frames decoded, for the tests and `-v`.
        var decoded = 0
        /// Content bytes the checkpoints' cursors decoded, for the tests
        /// (a read decodes at most one interval before its bytes).
        var decodedByCursors = 0
        /// The most `used` ever was, for the tests.
        var peak = 0
        /// Frames too large to keep that were streamed to their end and
        /// passed their checks: later reads stream them only to their end.
        var verified = Set<Int>()
        /// The decoder's window of each frame too large to keep, from its
        /// header, read once (the room a stream of it takes).
        var windows: [Int: Int] = [:]

        /// The cursors of the frame of ``FrameCache/checkpoints``.
        var cursors = Cursors()

        /// Adds `bytes` to those held.
        mutating func take(_ bytes: Int) {
            used += bytes
            peak = max(peak, used)
        }
    }

    /// The reader whose frames are kept.
    package let reader: SeekableReader
    /// The bytes of decoded frames kept at most.
    package let budget: Int
    /// A read that ends this close to its frame's end (or within a 16th
    /// of a smaller frame) finishes the frame: what is left is, in a tar,
    /// the next member's header blocks (up to 64 KiB with long names and
    /// pax records), which a file system does not read.
    static let finishedWithin = 64 << 10
    /// A read that starts this far before the furthest read of its frame
    /// goes back into it (`tar c` of a folder reads it in the mount's order,
    /// which differs here and there from the archive's); reads of one file
    /// that the file system's threads serve out of order lie closer, within
    /// the kernel's read-ahead.
    static let backJump = 1 << 20
    /// Called after each frame is decoded, before its bytes are kept or
    /// handed on: an error it throws fails the frame as a decoding error
    /// would (the mount's check that the archive is still the one it read).
    let decoded: @Sendable () throws(WeirError) -> Void
    let state = ConditionLock(State())
    /// The frames whose content size only their seek table entry gives
    /// (their headers, read when the reader opened, declare none), in
    /// order: each is decoded, and so its size checked, before any byte of
    /// a frame after it is served (a size that lies would serve the content
    /// after it from the wrong offsets); then `sizesChecked` counts it.
    private let tableSized: [Int]
    private let sizesChecked = Locked(0)
    /// Checkpoints of the reader's one frame, too large to keep (a
    /// `.tar.zst` that `zstd` wrote, mounted: docs/mount.md): a read decodes
    /// from the checkpoint before it, or goes on from where a cursor is,
    /// rather than streaming the frame from its start. Their windows in
    /// memory count in the budget for as long as the cache lives.
    package let checkpoints: FrameCheckpoints?
    /// What a cursor of that frame holds (``FrameCursor/footprint(windowSize:)``).
    let cursorNeed: Int
    /// Cursors at most: one for each reader going through the frame in
    /// order at once (`tar c`, a `cp -r` beside it), whose places are kept;
    /// past them a read takes the cursor least recently used.
    static let maximumCursors = 4

    /// A cache of `reader`'s frames of up to `budget` bytes; `decoded` is
    /// called after each decode (and each streamed read), before its bytes
    /// are kept or handed on.
    /// `checkpoints`, of the reader's one frame, serve the reads of it.
    package init(reader: SeekableReader, budget: Int, checkpoints: FrameCheckpoints? = nil,
                 decoded: @escaping @Sendable () throws(WeirError) -> Void = {}) {
        self.reader = reader
        self.budget = max(0, budget)
        self.decoded = decoded
        self.checkpoints = reader.frameCount == 1 ? checkpoints : nil
        cursorNeed = checkpoints.map { FrameCursor.footprint(windowSize: $0.windowSize) } ?? 0
        if let held = self.checkpoints?.memoryBytes { state.withLock { $0.take(held) } }
        tableSized = reader.frames.indices.filter { index in
            reader.frames[index].sizeFromTableOnly && !reader.frames[index].headerUnread
        }
    }

    /// How many frames were decoded into the cache so far.
    package var framesDecoded: Int { state.withLock { $0.decoded } }

    /// Content bytes decoded by the cursors of the checkpoints' frame so far.
    package var bytesDecodedByCursors: Int { state.withLock { $0.decodedByCursors } }

    /// The bytes the cache holds now (frames being decoded and streams included).
    package var bytesHeld: Int { state.withLock { $0.used } }

    /// The most bytes the cache ever held at once.
    package var peakBytesHeld: Int { state.withLock { $0.peak } }

    /// What a stream's decoder holds beside its window: the reader's input
    /// and output pieces, libzstd's block buffers and tables.
    static let streamOverhead = 2 * FrameDecoder.pieceSize + (512 << 10)

    /// Copies the content's bytes of `range` into `buffer` (at least
    /// `range.count` bytes), decoding the frames not kept.
    ///
    /// - Throws: `WeirError` `.outOfRange` when the range ends past the
    ///   content; the reader's errors of a frame that fails its checks.
    package func read(_ range: Range<Int>, into buffer: UnsafeMutableRawBufferPointer) throws(WeirError) {
        guard range.lowerBound >= 0, range.upperBound <= reader.count else {
            throw WeirError.outOfRange(path: reader.path, range: range, size: reader.count)
        }
        guard !range.isEmpty else { return }
        try checkSizes(before: reader.frame(containing: range.upperBound - 1))
        var index = reader.frame(containing: range.lowerBound)
        while index < reader.frameCount, range.lowerBound < range.upperBound {
            let frame = reader.contentRange(ofFrame: index)
            guard frame.lowerBound < range.upperBound else { break }
            let from = max(range.lowerBound, frame.lowerBound), to = min(range.upperBound, frame.upperBound)
            if from < to {
                let target = UnsafeMutableRawBufferPointer(
                    rebasing: buffer[(from - range.lowerBound) ..< (to - range.lowerBound)])
                if keeps(frame.count) {
                    try withFrame(index, from: from, to: to) { all in
                        target.copyMemory(from: UnsafeRawBufferPointer(
                            rebasing: all[(from - frame.lowerBound) ..< (to - frame.lowerBound)]))
                    }
                } else if let checkpoints {
                    try readThroughCheckpoints(checkpoints, from: from - frame.lowerBound, to: to - frame.lowerBound,
                                               into: target)
                } else {
                    try stream(index, from: from, to: to, into: target)
                }
            }
            index += 1
        }
    }

    /// Hands `body` the content's bytes of `range` where the cache keeps
    /// them, decoding their frame if it is not kept: no copy, for a reply
    /// that writes them out at once. The frame stays alive while `body`
    /// runs, even if the cache drops it meanwhile.
    ///
    /// - Returns: what `body` returns; nil (and `body` is not called) when
    ///   `range` is empty, is not within one frame, or its frame is too
    ///   large to keep: ``read(_:into:)`` then.
    /// - Throws: `WeirError` `.outOfRange` when the range ends past the
    ///   content; the reader's errors of a frame that fails its checks.
    package func withBytes<Result>(_ range: Range<Int>,
                                   _ body: (UnsafeRawBufferPointer) -> Result) throws(WeirError) -> Result? {
        guard range.lowerBound >= 0, range.upperBound <= reader.count else {
            throw WeirError.outOfRange(path: reader.path, range: range, size: reader.count)
        }
        guard !range.isEmpty else { return nil }
        let index = reader.frame(containing: range.lowerBound)
        let frame = reader.contentRange(ofFrame: index)
        guard range.upperBound <= frame.upperBound, keeps(frame.count) else { return nil }
        try checkSizes(before: index)
        return try withFrame(index, from: range.lowerBound, to: range.upperBound) { all in
            body(UnsafeRawBufferPointer(
                rebasing: all[(range.lowerBound - frame.lowerBound) ..< (range.upperBound - frame.lowerBound)]))
        }
    }

    /// Hands `body` all of frame `index`'s bytes, kept or decoded now, and
    /// holds them (they are not dropped) until it returns. `from ..< to`:
    /// the content the read takes from it.
    private func withFrame<Result>(_ index: Int, from: Int, to: Int,
                                   _ body: (UnsafeRawBufferPointer) -> Result) throws(WeirError) -> Result {
        // The bytes' last reference goes with this closure, before the frame is unpinned: once unpinned, a
        // drop counts its memory as free, and another decode may take it.
        let result = try { () throws(WeirError) -> Result in
            try frameBytes(index, from: from, to: to).withUnsafeBytes(body)
        }()
        unpin(index)
        return result
    }

    /// Starts decoding, on another thread, the frame after the one that
    /// holds content offset `offset`, unless it is kept, being decoded, or
    /// too large to keep: a sequential reader finds it ready.
    package func readAhead(after offset: Int) {
        let index = reader.frame(containing: offset) + 1
        guard index < reader.frameCount else { return }
        let size = reader.contentRange(ofFrame: index).count, input = reader.frames[index].compressedSize
        guard keeps(size), state.withLock({ state in
            // Room for it (its input too, while decoded) and for one more frame as large: a reader's next
            // frame, which a frame being decoded (this one) could not give way to.
            guard state.entries[index] == nil, makeRoom(for: 2 * size + input, &state, finishedOnly: true) else {
                return false
            }
            state.clock += 1
            state.entries[index] = Entry(bytes: nil, lastUse: state.clock, read: false)
            state.take(size + input)
            return true
        }) else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            // A frame that fails here fails again, with its error, for the read that needs it.
            _ = try? decode(index, size: size, input: input)
        }
    }

    /// Decodes, once, each frame before frame `index` whose size only its
    /// seek table entry gives, in order, checking it (``tableSized``).
    ///
    /// - Throws: the reader's error for a frame that fails (its size not
    ///   the entry's): every read past it fails the same way.
    private func checkSizes(before index: Int) throws(WeirError) {
        guard let first = tableSized.first, first < index else { return }
        while true {
            let next = sizesChecked.current
            guard next < tableSized.count, tableSized[next] < index else { return }
            let frame = tableSized[next], content = reader.contentRange(ofFrame: frame)
            if content.isEmpty {
                // No content listed: decoded whole, it must have none.
                _ = try reader.decodeFrame(frame)
                try decoded()
            } else if keeps(content.count) {
                try withFrame(frame, from: content.upperBound - 1, to: content.upperBound) { _ in }
            } else {
                // Read to its end, a frame is decoded to its end and checked there.
                try reader.read(content.upperBound - 1 ..< content.upperBound) { _ throws(WeirError) in }
                try decoded()
            }
            sizesChecked.withLock { $0 = max($0, next + 1) }
        }
    }

    /// Whether a frame of `size` bytes is kept.
    private func keeps(_ size: Int) -> Bool { size <= budget / 2 }

    /// Frame `index`, kept or decoded now, pinned for the caller (who
    /// calls ``unpin(_:)`` once done with the bytes); a frame another
    /// thread is decoding is waited for, and so is room for a decode.
    /// `from ..< to`: the content the read takes from it.
    private func frameBytes(_ index: Int, from: Int, to: Int) throws(WeirError) -> [UInt8] {
        let size = reader.contentRange(ofFrame: index).count, input = reader.frames[index].compressedSize
        enum Found { case kept([UInt8]), mine }
        let found: Found = state.withLock(when: { state in
            state.entries[index].map { $0.bytes != nil } ?? fits(size + input, state)
        }) { state in
            state.clock += 1
            if var entry = state.entries[index], let bytes = entry.bytes {
                entry.lastUse = state.clock
                entry.reached = from < entry.reached - Self.backJump ? to : max(entry.reached, to)
                entry.read = true
                entry.pins += 1
                state.entries[index] = entry
                return .kept(bytes)
            }
            _ = makeRoom(for: size + input, &state, finishedOnly: false)
            state.entries[index] = Entry(bytes: nil, lastUse: state.clock, reached: to, pins: 1)
            state.take(size + input)
            return .mine
        }
        if case .kept(let bytes) = found { return bytes }
        return try decode(index, size: size, input: input)
    }

    /// A reader is done with the bytes of frame `index` that
    /// ``frameBytes(_:from:to:)`` handed it.
    private func unpin(_ index: Int) {
        state.withLock(broadcast: true) { state in state.entries[index]?.pins -= 1 }
    }

    /// Whether `need` bytes fit once the frames no reader holds are
    /// dropped; or, larger than the budget, whether nothing else is held.
    func fits(_ need: Int, _ state: State) -> Bool {
        let freeable = state.entries.values.reduce(0) { total, entry in
            total + (entry.pins == 0 ? entry.bytes?.count ?? 0 : 0)
        }
        return state.used - freeable + need <= budget || state.used == freeable
    }

    /// Streams frame `index`, too large to keep, from its start to content
    /// offset `to`, copying `from ..< to` into `target`: to its end, for
    /// its checks, until a stream of it passed them. Waits for room for its
    /// decoder first.
    private func stream(_ index: Int, from: Int, to: Int, into target: UnsafeMutableRawBufferPointer)
        throws(WeirError)
    {
        let frame = reader.contentRange(ofFrame: index)
        let need = try window(of: index) + Self.streamOverhead
        let checked = state.withLock(when: { fits(need, $0) }) { state in
            _ = makeRoom(for: need, &state, finishedOnly: false)
            state.take(need)
            return state.verified.contains(index) || !reader.options.verifyChecksum
        }
        defer { state.withLock(broadcast: true) { $0.used -= need } }
        var at = 0
        try reader.stream(reader.frames[index], size: frame.count,
                          (from - frame.lowerBound) ..< (to - frame.lowerBound), toEnd: !checked) {
            piece throws(WeirError) in
            UnsafeMutableRawBufferPointer(rebasing: target[at ..< at + piece.count]).copyMemory(from: piece)
            at += piece.count
        }
        try decoded()
        if !checked { state.withLock { _ = $0.verified.insert(index) } }
    }

    /// The window of frame `index` as its decoder holds it: at most its
    /// content (a frame of one segment has no window but its content),
    /// read from its header once.
    private func window(of index: Int) throws(WeirError) -> Int {
        if let known = state.withLock({ $0.windows[index] }) { return known }
        let frame = reader.frames[index], size = reader.contentRange(ofFrame: index).count
        // A frame header is 18 bytes at most (RFC 8878: magic, descriptor, window, dictionary, content size).
        let head = try reader.file.read(count: min(frame.compressedSize, 18), at: frame.offset, operation: .read)
        // A header that cannot be read is the stream's to report; till then, the content is the bound.
        let window = head.withUnsafeBytes { FrameHeader(startOf: $0) }.map { min(Int($0.windowSize), size) } ?? size
        state.withLock { $0.windows[index] = window }
        return window
    }

    /// Decodes frame `index` (`size` bytes, from `input` bytes read whole:
    /// both held, in the budget, while it is decoded), whose entry this
    /// thread made, and keeps it.
    private func decode(_ index: Int, size: Int, input: Int) throws(WeirError) -> [UInt8] {
        let bytes: [UInt8]
        do throws(WeirError) {
            bytes = try reader.decodeFrame(index)
            try decoded()
        } catch {
            // Nothing kept: the next read of the frame decodes it again, and fails again.
            state.withLock(broadcast: true) { state in
                state.entries[index] = nil
                state.used -= size + input
            }
            throw error
        }
        state.withLock(broadcast: true) { state in
            state.entries[index]?.bytes = bytes
            state.used -= input
            state.decoded += 1
        }
        return bytes
    }

    /// Drops decoded frames until `size` bytes more fit the budget: those
    /// read to their end first, least recently used first, then (unless
    /// `finishedOnly`) those read ahead and not read yet (a guess, where
    /// the others are frames readers are in), then the others the same
    /// way, until only frames being decoded or held by readers are left.
    ///
    /// - Returns: whether the room is made; with `finishedOnly`, nothing is
    ///   dropped unless the frames read to their end make it all.
    private func makeRoom(for size: Int, _ state: inout State, finishedOnly: Bool) -> Bool {
        let finished = { (index: Int, entry: Entry) in
            let frame = self.reader.contentRange(ofFrame: index)
            return entry.reached > frame.upperBound - min(Self.finishedWithin, frame.count / 16)
        }
        if finishedOnly {
            let freeable = state.entries.reduce(0) { total, entry in
                total + (finished(entry.key, entry.value) && entry.value.pins == 0 ? entry.value.bytes?.count ?? 0 : 0)
            }
            guard state.used + size - freeable <= budget else { return false }
        }
        while state.used + size > budget {
            let kept = state.entries.filter { $0.value.bytes != nil && $0.value.pins == 0 }
            let older = { (one: (key: Int, value: Entry), other: (key: Int, value: Entry)) in
                one.value.lastUse < other.value.lastUse
            }
            let done = kept.filter { finished($0.key, $0.value) }.min(by: older)
            let oldest = finishedOnly ? done : done ?? kept.filter({ !$0.value.read }).min(by: older)
                    ?? kept.min(by: older)
            guard let oldest else { return !finishedOnly }
            state.used -= oldest.value.bytes?.count ?? 0
            state.entries[oldest.key] = nil
        }
        return true
    }
}
