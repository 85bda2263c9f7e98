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
/// The least recently used frames go first when the budget is full; a
/// frame being decoded counts against the budget, and the budget may be
/// passed by the frames decoding at once (never refused: a read that waits
/// for memory could wait for itself). A frame larger than half the budget
/// is never kept: its reads stream it through the reader, checked as well.
///
/// Safe to share across threads.
package final class FrameCache: Sendable {
    private struct Entry {
        /// Nil while the frame is decoded.
        var bytes: [UInt8]?
        var lastUse: UInt64
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
                    let bytes = try frameBytes(index)
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

    /// Starts decoding, on another thread, the frame after the one that
    /// holds content offset `offset`, unless it is kept, being decoded, or
    /// too large to keep: a sequential reader finds it ready.
    package func readAhead(after offset: Int) {
        let index = reader.frame(containing: offset) + 1
        guard index < reader.frameCount, keeps(reader.contentRange(ofFrame: index).count),
              !state.withLock({ $0.entries[index] != nil }) else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            // A frame that fails here fails again, with its error, for the read that needs it.
            _ = try? frameBytes(index)
        }
    }

    /// Whether a frame of `size` bytes is kept.
    private func keeps(_ size: Int) -> Bool { size <= budget / 2 }

    /// Frame `index`, kept or decoded now; a frame another thread is
    /// decoding is waited for.
    private func frameBytes(_ index: Int) throws(WeirError) -> [UInt8] {
        let size = reader.contentRange(ofFrame: index).count
        enum Found { case kept([UInt8]), mine }
        let found: Found = state.withLock(when: { $0.entries[index].map { $0.bytes != nil } ?? true }) { state in
            state.clock += 1
            if var entry = state.entries[index], let bytes = entry.bytes {
                entry.lastUse = state.clock
                state.entries[index] = entry
                return .kept(bytes)
            }
            state.entries[index] = Entry(bytes: nil, lastUse: state.clock)
            state.used += size
            evict(&state)
            return .mine
        }
        if case .kept(let bytes) = found { return bytes }
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

    /// Drops the least recently used decoded frames until the entries fit
    /// the budget, or only frames being decoded are left.
    private func evict(_ state: inout State) {
        while state.used > budget {
            guard let oldest = state.entries.filter({ $0.value.bytes != nil })
                .min(by: { $0.value.lastUse < $1.value.lastUse }) else { return }
            state.used -= oldest.value.bytes?.count ?? 0
            state.entries[oldest.key] = nil
        }
    }
}
