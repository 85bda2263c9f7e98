import WeirFiles
import WeirFormats
import WeirSystem

/// Tells a decompression's ``PartialOutput`` of each frame whose content is
/// written, in file order, so that its checkpoints only ever name frames
/// whose content is whole on disk.
///
/// The reading thread reports each frame it hands out with the number of
/// the first output piece after it: a frame decoded whole before its one
/// piece is sent, a streamed one after its last. The writer reports each
/// piece once written, in any order (a sparse piece of zeros has no write
/// and is reported at once). A frame is whole once every piece before its
/// number is written, and its content is the bytes of the pieces since the
/// frame before: the pieces of a frame are numbered only after the frame
/// before it was reported. A skippable frame has no content; its entry goes
/// to the record with the next frame's, so the input is always sought to
/// the end of a frame that has content.
///
/// Threads: the reading thread and the writer's queue. The state is behind
/// a lock, and the partial output is told under it, so in file order.
final class DecompressionCheckpointFeed: Sendable {
    private struct Waiting {
        /// The skippable frames just before it.
        var skippable: [SeekTable.Entry]
        var compressedSize: Int
        var checksum: UInt32
        /// The number of the first piece after its content.
        var end: Int
    }

    private struct State {
        var waiting: [Waiting] = []
        var skippable: [SeekTable.Entry] = []
        /// Every piece below this number is written.
        var written = 0
        /// Pieces written before one below them, by number: their sizes.
        var early: [Int: Int] = [:]
        /// Bytes of the pieces written since the last frame told.
        var content = 0
        /// A piece dropped, or a frame too large for an entry: no more is told.
        var stopped = false
    }

    private let partial: PartialOutput
    private let state = Locked(State())

    init(partial: PartialOutput) { self.partial = partial }

    /// A skippable frame of `size` bytes was read. Reading thread.
    func skippable(size: Int) {
        state.withLock { state in
            guard let size = UInt32(exactly: size) else { return state.stopped = true }
            state.skippable.append(SeekTable.Entry(compressedSize: size, decompressedSize: 0, checksum: 0))
        }
    }

    /// The frame of `compressedSize` bytes ending with `checksum` has its
    /// content in the pieces before number `end`. Reading thread.
    func frame(compressedSize: Int, checksum: UInt32?, end: Int) {
        state.withLock { state in
            state.waiting.append(Waiting(skippable: state.skippable, compressedSize: compressedSize,
                                         checksum: checksum ?? 0, end: end))
            state.skippable = []
            tell(&state)
        }
    }

    /// Piece `index` of `size` bytes is written; -1: it was dropped (the run
    /// failed or stopped). The writer's queue.
    func pieceWritten(_ index: Int, size: Int) {
        state.withLock { state in
            guard size >= 0 else { return state.stopped = true }
            state.early[index] = size
            while let size = state.early.removeValue(forKey: state.written) {
                state.written += 1
                state.content += size
                tell(&state)
            }
        }
    }

    /// Tells the partial output of the frames now whole, in order.
    private func tell(_ state: inout State) {
        while !state.stopped, let first = state.waiting.first, first.end <= state.written {
            guard let compressed = UInt32(exactly: first.compressedSize),
                  let content = UInt32(exactly: state.content) else { return state.stopped = true }
            for entry in first.skippable { partial.written(entry) }
            partial.written(SeekTable.Entry(compressedSize: compressed, decompressedSize: content,
                                            checksum: first.checksum))
            state.waiting.removeFirst()
            state.content = 0
        }
    }
}
