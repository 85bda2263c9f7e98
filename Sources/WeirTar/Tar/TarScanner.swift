import WeirSystem
import Dispatch

/// Finds the members of a tar stream while it is compressed, and encodes
/// them into the member index as they are found (docs/members.md, "How
/// the writer finds members").
///
/// The compression's reading thread hands every chunk it read from a pipe,
/// in content order, to ``feed(_:)``, which walks the chunk's header blocks
/// in place (``TarWalk``: a checksum and a few fields per member; data is
/// stepped over, never read) and returns: no thread, no queue, no chunk
/// held past the call. A resumed run's kept part, which no chunk holds, is
/// walked from the file (``feed(upTo:read:)``: the blocks the walk needs,
/// read by `pread`). A file's chunks, mapped, are walked by the workers
/// that compress them instead (``TarSegment``, ``TarStitcher``).
/// Each member found goes to a ``MemberIndex/ColumnWriter``, which
/// compresses the columns a block at a time, so the scan holds one block
/// of raw columns and the compressed index so far, whatever the member
/// count.
///
/// Why inline and by hand, not libarchive on a thread of its own (as up
/// to issue 68): libarchive's tar reader spent a fifth of a -1 run's CPU
/// on a source tree (it converts every name to wide characters), its
/// thread held up to two chunks past their compression (+17 MiB at -1),
/// and it loaded libxml2, ICU and nettle into every weir process. The walk costs a fraction of a
/// microsecond a member, on a thread that mostly waits for a free slot.
///
/// The scan never fails the compression: a stream that stops being tar, a
/// tar cut short, end the walk; ``finish(contentSize:path:)`` then gives no
/// index (a piece of a tar, such as `parallel --pipepart` cuts, gets none:
/// `weir --index` on the joined file writes the whole tar's).
///
/// Threads: one at a time (the reading thread, then the thread that ends
/// the run, after it).
package final class TarScanner: @unchecked Sendable {  // one thread at a time, in turn (above)
    private var walk: TarWalk<MemberIndex.ColumnWriter>
    /// Where the next chunk fed begins in the content.
    private var offset: Int
    /// The buffer the walk reads file blocks into.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TarScanner.fileReadSize, alignment: 16)

    /// Whether `chunk`, the first of a content, starts as a tar stream:
    /// `ustar` at offset 257 of its first block (POSIX ustar and pax write
    /// `ustar\0`, GNU tar `ustar ` ).
    package static func startsTar(_ chunk: DispatchData) -> Bool {
        guard chunk.count >= 512 else { return false }
        let magic = Array("ustar".utf8)
        return chunk.subdata(in: 257 ..< 262).elementsEqual(magic)
    }

    /// The same, of the first bytes of a content.
    package static func startsTar(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 512 && bytes[257 ..< 262].elementsEqual("ustar".utf8)
    }

    /// A scan whose index is compressed at `level` (``MemberIndex/level(forRunLevel:)``),
    /// its blocks closed at `blockBytes` (``MemberIndex/blockBytes``: the
    /// tests' are smaller), fed from the content's offset `start` on (a
    /// resumed run's, once ``feed(upTo:read:)`` walked what comes before).
    package init(level: Int = 3, start: Int = 0, blockBytes: Int = MemberIndex.blockBytes) {
        walk = TarWalk(sink: MemberIndex.ColumnWriter(level: level, blockBytes: blockBytes))
        offset = start
    }

    /// Where the next chunk fed begins in the content.
    package var position: Int { offset }

    /// Whether the scan still wants content.
    package var isScanning: Bool { walk.isWalking }

    /// Walks the next chunk of the content, in memory (a pipe's), region by
    /// region, where it lies: nothing is copied.
    package func feed(_ chunk: DispatchData) {
        let start = offset
        offset += chunk.count
        guard walk.isWalking, start + chunk.count > walk.needed else { return }
        chunk.enumerateBytes { bytes, at, stop in
            walk.consume(UnsafeRawBufferPointer(bytes), at: start + at)
            if !walk.isWalking { stop = true }
        }
    }

    /// Walks the content up to `end` from the input file rather than from
    /// memory: `read(offset, buffer)` fills `buffer` with the input's bytes
    /// at `offset` (`pread`), and only the blocks the walk needs are read,
    /// ``fileReadSize`` bytes at a time.
    ///
    /// For a resumed run's kept part, which no chunk holds.
    ///
    /// - Throws: what `read` throws.
    package func feed(upTo end: Int, read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int)
        throws(WeirError) {
        defer { offset = end }
        try walk.consume(upTo: end, finishingMember: false, buffer: readBuffer, read: read)
    }

    /// Bytes read from the file at a time: a header block with a pax record
    /// or a GNU long name before it, in one read, where most members need one.
    package static let fileReadSize = 2048

    deinit { readBuffer.deallocate() }

    /// What a scan found: the index's skippable frame, ready to be written
    /// just before the seek table, and how many members it lists.
    package struct Found: Sendable {
        package let frame: MemberIndex.IndexFrame
        package let members: Int

        package init(frame: MemberIndex.IndexFrame, members: Int) {
            (self.frame, self.members) = (frame, members)
        }
    }

    /// Ends the scan of a content of `contentSize` bytes: the index of a
    /// whole tar; nil when the content is not one (no member found, a tar
    /// cut short, a stream that stopped being tar).
    ///
    /// - Throws: ``WeirError`` `.library` when libzstd fails (`path` the output's name).
    package func finish(contentSize: Int, path: String) throws(WeirError) -> Found? {
        walk.finish(contentSize: contentSize)
        guard walk.count > 0, let stop = walk.stop, stop.clean else { return nil }
        let frame = try walk.sink.frame(endedEarly: false, endOffset: min(stop.offset, contentSize),
                                        contentSize: contentSize, path: path)
        return Found(frame: frame, members: walk.count)
    }
}
