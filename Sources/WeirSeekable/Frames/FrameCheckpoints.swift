import WeirFormats
import WeirSystem
import WeirTar

/// Checkpoints of one large zstd frame's decoder, made at intervals during
/// one decode of it from its start (`weir mount`'s, which makes the member
/// tree of a tar with no index): from the checkpoint before an offset, a
/// ``FrameCursor`` decodes at most one interval to reach it, rather than the
/// frame from its start (issue 81, item 6; docs/mount.md).
///
/// A checkpoint is the decoder's state between two blocks
/// (``BlockFrameState``: the scan's last table descriptions, the repeat
/// offsets), the file's offset of the next block, and the content's last
/// Window_Size bytes before it, which its matches may reach. The windows
/// are the memory: those that fit `memoryLimit` are kept in memory, the
/// others written to a file in `TMPDIR`, unlinked as soon as made
/// (``IndexSpill``). A window the file does not take (a full disk) drops
/// its checkpoint: reads near it decode from the one before, longer but
/// the same bytes.
///
/// The checkpoints hold the bytes of the file as it was decoded: they are
/// the mount's, for the archive's identity it checks after every decode.
///
/// Made by one thread (``Recorder``), then read by any: immutable.
package final class FrameCheckpoints: Sendable {
    /// One checkpoint: the state, where its next block begins, its window.
    package struct Checkpoint: Sendable {
        package let state: BlockFrameState
        package let blockOffset: Int
        /// The frame's blocks before it.
        package let blockIndex: Int
        /// In memory, or nil: at `spilledAt` in the spill file.
        let window: [UInt8]?
        let spilledAt: Int

        /// The frame's content before the checkpoint's block.
        package var produced: Int { state.produced }
    }

    /// The frame's compressed bytes in the file.
    package let frame: Range<Int>
    package let windowSize: Int
    /// The content between two checkpoints, about (they fall between blocks).
    package let interval: Int
    /// In content order; the first at the frame's start.
    package let checkpoints: [Checkpoint]
    /// Each block's digest (``BlockFrame/digest(_:)``) as this decode,
    /// whose end checked the frame's checksum, found it: what a cursor
    /// restored from a checkpoint checks its blocks against (4 bytes a
    /// block, counted in ``memoryBytes``).
    package let digests: [UInt32]
    /// The windows' bytes (and the digests) held in memory.
    package let memoryBytes: Int
    /// The windows' bytes in the spill file.
    package let spilledBytes: Int
    private let spill: IndexSpill?
    private let path: String

    private init(frame: Range<Int>, windowSize: Int, interval: Int, checkpoints: [Checkpoint], digests: [UInt32],
                 memoryBytes: Int, spill: IndexSpill?, path: String) {
        (self.frame, self.windowSize, self.interval, self.checkpoints) = (frame, windowSize, interval, checkpoints)
        (self.digests, self.memoryBytes, self.spill, self.path) = (digests, memoryBytes, spill, path)
        spilledBytes = spill?.size ?? 0
    }

    /// The content between two checkpoints for a frame of `windowSize`:
    /// 16 MiB (a read decodes at most that before its own bytes: docs/mount.md
    /// has what it costs), at least four windows (each
    /// checkpoint holds one: a quarter of the content, at most, in
    /// checkpoints).
    package static func interval(windowSize: Int) -> Int { max(16 << 20, 4 * windowSize) }

    /// The last checkpoint at or before content offset `offset`.
    package func checkpoint(before offset: Int) -> Checkpoint {
        var low = 0, high = checkpoints.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if checkpoints[middle].produced <= offset { low = middle } else { high = middle - 1 }
        }
        return checkpoints[low]
    }

    /// Writes `checkpoint`'s window into `buffer` (its window's size).
    ///
    /// - Throws: `WeirError` `.read` when the spill file cannot be read back.
    package func fill(_ checkpoint: Checkpoint, into buffer: UnsafeMutableRawBufferPointer) throws(WeirError) {
        if let window = checkpoint.window {
            window.withUnsafeBytes { buffer.copyMemory(from: $0) }
        } else if spill?.read(into: buffer, at: checkpoint.spilledAt) != true {
            throw WeirError.truncated(path: path, operation: .read,
                                      "a checkpoint's window could not be read back from its file in TMPDIR")
        }
    }

    /// Makes the checkpoints while a ``FrameCursor`` decodes the frame from
    /// its start: ``record(_:)`` after each block.
    package final class Recorder {
        private let frame: Range<Int>
        private let memoryLimit: Int
        private let path: String
        private var checkpoints: [Checkpoint] = []
        private var digests: [UInt32] = []
        private var memory = 0
        private var spill: IndexSpill?
        private var spillTried = false
        /// Whether a block went by unrecorded: no digests, so no checkpoints.
        private var broken = false
        /// The cursor recorded: checkpoints only when it decoded the whole
        /// frame (its end checked), each block's digest taken.
        private var cursor: FrameCursor?
        private var windowSize = 0
        private var interval = Int.max
        private var next = 0
        /// For the tests: a folder for the spill file (else `TMPDIR`).
        private let spillFolder: String?

        /// For the frame at `frame` (its compressed bytes) of the file at
        /// `path`, keeping at most `memoryLimit` bytes of windows in memory.
        package init(frame: Range<Int>, memoryLimit: Int, path: String, spillFolder: String? = nil) {
            (self.frame, self.memoryLimit, self.path, self.spillFolder) = (frame, memoryLimit, path, spillFolder)
        }

        /// Records a checkpoint when `cursor`, between two blocks, is an
        /// interval past the last one (or at the frame's start).
        package func record(_ cursor: FrameCursor) {
            // Called after every block (and once before the first): each block's digest, in order.
            self.cursor = cursor
            if cursor.blocks == digests.count + 1 {
                digests.append(cursor.lastDigest)
                memory += MemoryLayout<UInt32>.size
            } else if cursor.blocks != digests.count {
                broken = true
            }
            if checkpoints.isEmpty {
                windowSize = cursor.windowSize
                interval = FrameCheckpoints.interval(windowSize: windowSize)
            }
            guard cursor.produced >= next, !cursor.finished else { return }
            next = cursor.produced + interval
            let state = cursor.saveState()
            let window = cursor.content(from: state.produced - state.windowCount, count: state.windowCount)
            if memory + window.count <= memoryLimit {
                memory += window.count
                checkpoints.append(Checkpoint(state: state, blockOffset: cursor.offset, blockIndex: cursor.blocks,
                                              window: Array(window), spilledAt: 0))
                return
            }
            if !spillTried {
                spillTried = true
                spill = IndexSpill(folder: spillFolder, name: "weir-checkpoints")
            }
            guard let spill else { return }
            let at = spill.size
            // A window the file does not take whole is no checkpoint (the next write starts past it: none is read).
            guard spill.append(window) == window.count else { return }
            checkpoints.append(Checkpoint(state: state, blockOffset: cursor.offset, blockIndex: cursor.blocks,
                                          window: nil, spilledAt: at))
        }

        /// The checkpoints made; nil when none was, or when the decode did
        /// not reach the frame's end (a content found not to be a tar stops
        /// it early): the digests would not cover the frame.
        package func finish() -> FrameCheckpoints? {
            defer { cursor = nil }
            guard !checkpoints.isEmpty, !broken, cursor?.finished == true else { return nil }
            return FrameCheckpoints(frame: frame, windowSize: windowSize, interval: interval, checkpoints: checkpoints,
                                    digests: digests, memoryBytes: memory, spill: spill, path: path)
        }
    }
}
