import Dispatch
import WeirFiles
import WeirFormats
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
/// the others the same way. A frame being decoded counts against the
/// budget, and the budget may be passed by the frames decoding at once
/// (never refused: a read that waits for memory could wait for itself). A
/// frame larger than half the budget is never kept: its reads stream it
/// through the reader, checked as well.
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
    private struct Entry {
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
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        /// The bytes the entries hold or will hold.
        var used = 0
        var clock: UInt64 = 0
        /// Frames decoded, for the tests and `-v`.
        var decoded = 0
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
    private let decoded: @Sendable () throws(WeirError) -> Void
    private let state = ConditionLock(State())

    /// A cache of `reader`'s frames of up to `budget` bytes; `decoded` is
    /// called after each decode (and each streamed read), before its bytes
    /// are kept or handed on.
    package init(reader: SeekableReader, budget: Int,
                 decoded: @escaping @Sendable () throws(WeirError) -> Void = {}) {
        self.reader = reader
        self.budget = max(0, budget)
        self.decoded = decoded
    }

    /// How many frames were decoded into the cache so far.
    package var framesDecoded: Int { state.withLock { $0.decoded } }

    /// The bytes the cache holds now (frames being decoded included).
    package var bytesHeld: Int { state.withLock { $0.used } }

    /// Copies the content's bytes of `range` into `buffer` (at least
    /// `range.count` bytes), decoding the frames not kept.
    ///
    /// - Throws: `WeirError` `.outOfRange` when the range ends past the
    ///   content; the reader's errors of a frame that fails its checks.
    package func read(_ range: Range<Int>, into buffer: UnsafeMutableRawBufferPointer) throws(WeirError) {
        guard range.lowerBound >= 0, range.upperBound <= reader.count else {
            throw WeirError.outOfRange(path: reader.path, range: range, size: reader.count)
        }
        var index = reader.frame(containing: range.lowerBound)
        while index < reader.frameCount, range.lowerBound < range.upperBound {
            let frame = reader.contentRange(ofFrame: index)
            guard frame.lowerBound < range.upperBound else { break }
            let from = max(range.lowerBound, frame.lowerBound), to = min(range.upperBound, frame.upperBound)
            if from < to {
                let target = UnsafeMutableRawBufferPointer(
                    rebasing: buffer[(from - range.lowerBound) ..< (to - range.lowerBound)])
                if keeps(frame.count) {
                    let bytes = try frameBytes(index, from: from, to: to)
                    bytes.withUnsafeBytes { all in
                        target.copyMemory(from: UnsafeRawBufferPointer(
                            rebasing: all[(from - frame.lowerBound) ..< (to - frame.lowerBound)]))
                    }
                } else {
                    var at = 0
                    try reader.read(from ..< to) { piece throws(WeirError) in
                        UnsafeMutableRawBufferPointer(rebasing: target[at ..< at + piece.count]).copyMemory(from: piece)
                        at += piece.count
                    }
                    try decoded()
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
        let bytes = try frameBytes(index, from: range.lowerBound, to: range.upperBound)
        return bytes.withUnsafeBytes { all in
            body(UnsafeRawBufferPointer(
                rebasing: all[(range.lowerBound - frame.lowerBound) ..< (range.upperBound - frame.lowerBound)]))
        }
    }

    /// Starts decoding, on another thread, the frame after the one that
    /// holds content offset `offset`, unless it is kept, being decoded, or
    /// too large to keep: a sequential reader finds it ready.
    package func readAhead(after offset: Int) {
        let index = reader.frame(containing: offset) + 1
        guard index < reader.frameCount else { return }
        let size = reader.contentRange(ofFrame: index).count
        guard keeps(size), state.withLock({ state in
            // Room for it and for one more frame as large: a reader's next frame, which a frame being
            // decoded (this one) could not give way to.
            guard state.entries[index] == nil, makeRoom(for: 2 * size, &state, finishedOnly: true) else {
                return false
            }
            state.clock += 1
            state.entries[index] = Entry(bytes: nil, lastUse: state.clock, read: false)
            state.used += size
            return true
        }) else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            // A frame that fails here fails again, with its error, for the read that needs it.
            _ = try? decode(index, size: size)
        }
    }

    /// Whether a frame of `size` bytes is kept.
    private func keeps(_ size: Int) -> Bool { size <= budget / 2 }

    /// Frame `index`, kept or decoded now; a frame another thread is
    /// decoding is waited for.
    /// `from ..< to`: the content the read takes from it.
    private func frameBytes(_ index: Int, from: Int, to: Int) throws(WeirError) -> [UInt8] {
        let size = reader.contentRange(ofFrame: index).count
        enum Found { case kept([UInt8]), mine }
        let found: Found = state.withLock(when: { $0.entries[index].map { $0.bytes != nil } ?? true }) { state in
            state.clock += 1
            if var entry = state.entries[index], let bytes = entry.bytes {
                entry.lastUse = state.clock
                entry.reached = from < entry.reached - Self.backJump ? to : max(entry.reached, to)
                entry.read = true
                state.entries[index] = entry
                return .kept(bytes)
            }
            _ = makeRoom(for: size, &state, finishedOnly: false)
            state.entries[index] = Entry(bytes: nil, lastUse: state.clock, reached: to)
            state.used += size
            return .mine
        }
        if case .kept(let bytes) = found { return bytes }
        return try decode(index, size: size)
    }

    /// Decodes frame `index` (`size` bytes), whose entry this thread made,
    /// and keeps it.
    private func decode(_ index: Int, size: Int) throws(WeirError) -> [UInt8] {
        let bytes: [UInt8]
        do throws(WeirError) {
            bytes = try reader.decodeFrame(index)
            try decoded()
        } catch {
            // Nothing kept: the next read of the frame decodes it again, and fails again.
            state.withLock(broadcast: true) { state in
                state.entries[index] = nil
                state.used -= size
            }
            throw error
        }
        state.withLock(broadcast: true) { state in
            state.entries[index]?.bytes = bytes
            state.decoded += 1
        }
        return bytes
    }

    /// Drops decoded frames until `size` bytes more fit the budget: those
    /// read to their end first, least recently used first, then (unless
    /// `finishedOnly`) those read ahead and not read yet (a guess, where
    /// the others are frames readers are in), then the others the same
    /// way, until only frames being decoded are left.
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
                total + (finished(entry.key, entry.value) ? entry.value.bytes?.count ?? 0 : 0)
            }
            guard state.used + size - freeable <= budget else { return false }
        }
        while state.used + size > budget {
            let kept = state.entries.filter { $0.value.bytes != nil }
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
