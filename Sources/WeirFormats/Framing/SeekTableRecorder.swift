import Dispatch
import WeirSystem

/// Builds the seek table of a compression run as its frames are written,
/// without holding any frame.
///
/// A worker that has compressed frame `index` calls ``compressed(_:decompressedSize:frame:)``
/// with the frame's bytes (only its size and, with checksums, its last 4
/// bytes are kept); the writer's `onFinished`, which sees frames in file
/// order, calls ``written(_:size:)`` and the entry joins the table. After the
/// last frame, ``encoded()`` gives the table's skippable frame, written as
/// one more piece. Only frames compressed but not yet written are pending,
/// so the memory is the table's 12 bytes per frame.
///
/// Threads: any; the state is behind a lock.
package final class SeekTableRecorder: Sendable {
    private let checksums: Bool
    private let path: String
    private let state: Locked<(table: SeekTable, pending: [Int: (decompressed: Int, checksum: UInt32)],
                               failure: WeirError?, skippable: Int)>

    /// - Parameters:
    ///   - checksums: whether frames end with a content checksum, which the
    ///     table then repeats.
    ///   - path: how errors name the output.
    ///   - kept: the frames an earlier run wrote before this one's
    ///     (``PartialOutput``), already in the file.
    package init(checksums: Bool, path: String, kept: [SeekTable.Entry] = []) {
        self.checksums = checksums
        self.path = path
        var table = SeekTable(hasChecksums: checksums)
        for entry in kept {
            try? table.append(compressedSize: Int(entry.compressedSize), decompressedSize: Int(entry.decompressedSize),
                              checksum: entry.checksum, path: path)
        }
        state = Locked((table, [:], nil, 0))
    }

    /// Notes frame `index`, compressed from `decompressedSize` bytes into `frame`.
    package func compressed(_ index: Int, decompressedSize: Int, frame: UnsafeRawBufferPointer) {
        var checksum: UInt32 = 0
        if checksums, frame.count >= 4 {
            let tail = frame.count - 4
            for byte in 0 ..< 4 { checksum |= UInt32(frame[tail + byte]) << (8 * UInt32(byte)) }
        }
        state.withLock { $0.pending[index] = (decompressedSize, checksum) }
    }

    /// Adds frame `index`, of `size` bytes in the file, to the table, and
    /// returns its entry; called in file order. Pieces that are not frames
    /// noted by `compressed` are ignored.
    @discardableResult
    package func written(_ index: Int, size: Int) -> SeekTable.Entry? {
        state.withLock { state in
            guard let frame = state.pending.removeValue(forKey: index) else { return nil }
            do throws(WeirError) {
                try state.table.append(compressedSize: size, decompressedSize: frame.decompressed,
                                       checksum: frame.checksum, path: path)
                return state.table.entries.last
            } catch {
                if state.failure == nil { state.failure = error }
                return nil
            }
        }
    }

    /// Adds the entry of a skippable frame of `size` bytes just written
    /// after the frames (the member index): no content, no checksum.
    package func skippable(size: Int) throws(WeirError) {
        let failure: WeirError? = state.withLock { state in
            do throws(WeirError) {
                try state.table.append(compressedSize: size, decompressedSize: 0, path: path)
                state.skippable += 1
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// The skippable frames the table lists (``skippable(size:)``).
    package var skippableCount: Int { state.withLock { $0.skippable } }

    /// The number of frames in the table so far.
    package var frameCount: Int { state.withLock { $0.table.entries.count } }

    /// The table's skippable frame, to write after the last frame.
    ///
    /// - Throws: ``WeirError`` when a frame could not be recorded (4 GiB or
    ///   more, impossible with chunks of at most 1 GiB).
    package func encoded() throws(WeirError) -> DispatchData {
        let (bytes, failure) = state.withLock { ($0.table.encoded(), $0.failure) }
        if let failure { throw failure }
        return bytes.withUnsafeBytes { DispatchData(bytes: $0) }
    }
}
