import WeirSystem
import Dispatch
import Glibc

/// Finds the members of a tar stream while it is compressed, and encodes
/// them into the member index as they are found (docs/members.md, "How
/// the writer finds members").
///
/// The compression's reading thread hands every chunk it read, in content
/// order, to ``feed(_:)``, which walks the chunk's header blocks in place
/// (``TarWalk``: a checksum and a few fields per member; data is stepped
/// over, never read) and returns: no thread, no queue, no chunk held past
/// the call. Each member found goes to a ``MemberIndex/ColumnWriter``,
/// which compresses the columns a block at a time, so the scan holds one
/// block of raw columns and the compressed index so far, whatever the
/// member count.
///
/// Why inline and by hand, not libarchive on a thread of its own (as up
/// to issue 68): libarchive's tar reader spent ~2.3 µs of CPU a member
/// (it converts every name to wide characters), its thread held up to two
/// chunks past their compression (+17 MiB at -1), and it loaded libxml2,
/// ICU and nettle into every weir process. The walk costs a fraction of a
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
    /// fed from the content's offset `start` on (a resumed run's, once
    /// ``feedPrefix(upTo:read:)`` walked what comes before).
    package init(level: Int = 3, start: Int = 0) {
        walk = TarWalk(sink: MemberIndex.ColumnWriter(level: level))
        offset = start
    }

    /// Whether the scan still wants content.
    package var isScanning: Bool { walk.isWalking }

    /// Walks the next chunk of the content (no copy), region by region.
    ///
    /// With `releasingPages` (a chunk mapped from the input file, which no
    /// compressor has touched yet), the walk goes in steps of
    /// ``releaseStep`` and gives each step's pages back (`MADV_DONTNEED`)
    /// once walked: the pages a header read mapped in (the kernel maps up
    /// to 64 KiB around each fault) would otherwise stay in memory until
    /// the compressor reaches them — up to every chunk in flight, +17 MiB
    /// at -1 on a source tree. The compressor maps them in again as it
    /// would have anyway. Never for a chunk in anonymous memory (a pipe's),
    /// whose bytes `MADV_DONTNEED` would zero.
    package func feed(_ chunk: DispatchData, releasingPages: Bool = false) {
        let start = offset
        offset += chunk.count
        guard walk.isWalking, start + chunk.count > walk.needed else { return }
        chunk.enumerateBytes { bytes, at, stop in
            guard releasingPages, let base = bytes.baseAddress else {
                walk.consume(UnsafeRawBufferPointer(bytes), at: start + at)
                if !walk.isWalking { stop = true }
                return
            }
            let address = Int(bitPattern: base)
            var released = Page.roundDown(address)
            var from = 0
            while from < bytes.count, walk.isWalking {
                let to = min(bytes.count, from + Self.releaseStep)
                // Bytes the walk steps over are not read: only pages it read are in.
                if start + at + to > walk.needed {
                    walk.consume(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[from ..< to]),
                                 at: start + at + from)
                }
                let end = to == bytes.count ? Page.roundUp(address + to) : Page.roundDown(address + to)
                if end > released {
                    madvise(UnsafeMutableRawPointer(bitPattern: released), end - released, MADV_DONTNEED)
                    released = end
                }
                from = to
            }
            if !walk.isWalking { stop = true }
        }
    }

    /// The bytes walked between two gives-back of a mapped chunk's pages.
    static let releaseStep = 1 << 18

    /// Walks the content before `end` that was compressed by an earlier run
    /// (a resumed run's kept frames), reading only the blocks the walk
    /// needs: `read(offset, count)` gives those bytes of the input.
    ///
    /// - Throws: what `read` throws.
    package func feedPrefix(upTo end: Int,
                            read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int) throws(WeirError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while walk.isWalking, walk.needed < end {
            let at = walk.needed
            let count = try read(at, UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< min(buffer.count, end - at)]))
            guard count > 0 else { break }
            walk.consume(UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]), at: at)
        }
        offset = end
    }

    /// What a scan found: the index's skippable frame, ready to be written
    /// just before the seek table, and how many members it lists.
    package struct Found: Sendable {
        package let frame: [UInt8]
        package let members: Int

        package init(frame: [UInt8], members: Int) {
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
