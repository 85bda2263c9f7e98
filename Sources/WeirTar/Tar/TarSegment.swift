import WeirSystem

/// One chunk's share of the member index's walk, made by the worker that
/// compresses the chunk, from the chunk's bytes while that worker has them
/// in its cache (docs/members.md, "How the writer finds members"): no page
/// is touched and no system call made that the compression does not make.
///
/// The walk of a tar is sequential — where a member's header lies follows
/// from the header before it — but chunks are compressed side by side. So
/// a segment guesses: its walk starts at the chunk's first 512-byte block
/// (of the content's, offsets a multiple of 512) that reads as a header
/// (`ustar` at 257 and a valid checksum), or where it is told when that is
/// known (the content's first chunk). A ``TarStitcher`` takes the segments
/// in content order and keeps a segment's members only when its walk began
/// where the walk before it says the next header lies; from there the walk
/// is the one the whole content would have had (a walk between two members
/// keeps nothing of the members before but what the stitcher holds). Any
/// other segment — a guess in a member's data (a tar inside the tar), a
/// chunk with no header, headers that straddle the chunk's end — is walked
/// again from the right place, reading the blocks it needs from the input
/// file (``walk(upTo:read:)``).
///
/// What it keeps: every member whose end it found, with its names, and the
/// last one found, whose end is the next header's offset (``resume``).
///
/// Threads: its worker, then the stitcher, in turn.
package final class TarSegment: @unchecked Sendable {  // one thread at a time, in turn (above)
    /// The chunk's offsets in the content.
    package let chunkStart: Int
    package let chunkEnd: Int
    /// Where the walk began: a block that read as a header, or where it was told; nil until one is found.
    package private(set) var start: Int?
    private var walk: TarWalk<Records>
    /// After ``end()``: the members whose ends it found, in order.
    package private(set) var members = Records()
    /// After ``end()``: the last member found, its end ``resume`` (none, or one whose headers are in progress: nil).
    package private(set) var pending: Records?
    /// After ``end()``: where the next member's header blocks begin.
    package private(set) var resume = 0
    /// After ``end()``: where the walk stopped, and whether as a tar ends (nil: it goes on past the chunk).
    package private(set) var stop: (offset: Int, clean: Bool)?
    private var ended = false

    /// The share of the chunk at `chunkStart ..< chunkEnd` of the content;
    /// its walk begins at `start` when that is known (a member's first
    /// header block), else at the first block that reads as a header.
    package init(chunkStart: Int, chunkEnd: Int, start: Int? = nil) {
        (self.chunkStart, self.chunkEnd, self.start) = (chunkStart, chunkEnd, start)
        walk = TarWalk(sink: Records(), at: start ?? 0)
    }

    /// Walks `bytes`, the content at `offset`: the chunk's, in order, in
    /// pieces of any size (a compressor's steps).
    package func feed(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard start == nil else { return walk.consume(bytes, at: offset) }
        // The guess: a block of the content's 512 that lies whole in this piece and reads as a header.
        var at = (offset + 511) & ~511
        while at + 512 <= offset + bytes.count {
            let block = UnsafeRawBufferPointer(rebasing: bytes[at - offset ..< at - offset + 512])
            if Self.readsAsHeader(block) {
                start = at
                walk = TarWalk(sink: Records(), at: at)
                return walk.consume(UnsafeRawBufferPointer(rebasing: bytes[(at - offset)...]), at: at)
            }
            at += 512
        }
    }

    /// Walks the chunk from the input file rather than from memory, from
    /// ``start`` (which must be known) to `end`: `read(offset, buffer)`
    /// fills `buffer` with the input's bytes at `offset` (`pread`); only
    /// the blocks the walk needs are read.
    ///
    /// - Throws: what `read` throws.
    package func walk(upTo end: Int, read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int)
        throws(WeirError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TarScanner.fileReadSize, alignment: 16)
        defer { buffer.deallocate() }
        while walk.isWalking, walk.needed < end {
            let at = walk.needed
            let span = UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< min(buffer.count, end - at)])
            let count = try read(at, span)
            guard count > 0 else { return }
            walk.consume(UnsafeRawBufferPointer(rebasing: span[0 ..< count]), at: at)
        }
    }

    /// Ends the walk at the chunk's end: ``members``, ``pending``,
    /// ``resume`` and ``stop`` say what it found. Once.
    package func end() {
        guard !ended else { return }
        ended = true
        guard let start else {
            resume = chunkEnd
            return
        }
        stop = walk.stop
        walk.withResume { resume, pending in
            self.resume = max(resume, start)
            if let pending {
                var one = Records()
                one.append(pending)
                self.pending = one
            }
        }
        members = walk.sink
    }

    /// Whether `block` reads as a tar header: `ustar` at 257 (POSIX and
    /// GNU), its checksum valid.
    static func readsAsHeader(_ block: UnsafeRawBufferPointer) -> Bool {
        block[257] == UInt8(ascii: "u") && block[258 ..< 262].elementsEqual("star".utf8)
            && TarHeader(block).checksumIsValid
    }

    /// Members kept with their names, for a stitcher to hand on in order.
    package struct Records: TarMemberSink, Sendable {
        private struct Fixed {
            var headerOffset, headerLength, dataLength, size: Int
            var mtime: Int64
            var mode: UInt32
            var uid, gid: Int
            var type: UInt8
            var devmajor, devminor: Int
            /// The names' lengths, their bytes one after another in ``names``.
            var path, link, uname, gname: Int
        }

        private var fixed: [Fixed] = []
        private var names: [UInt8] = []

        package init() {}

        /// How many it holds.
        package var count: Int { fixed.count }

        /// The first one's header offset (nil: none).
        package var firstOffset: Int? { fixed.first?.headerOffset }

        package mutating func append(_ member: MemberIndex.Record) {
            fixed.append(Fixed(headerOffset: member.headerOffset, headerLength: member.headerLength,
                               dataLength: member.dataLength, size: member.size, mtime: member.mtime,
                               mode: member.mode, uid: member.uid, gid: member.gid, type: member.type,
                               devmajor: member.devmajor, devminor: member.devminor, path: member.path.count,
                               link: member.link.count, uname: member.uname.count, gname: member.gname.count))
            names.append(contentsOf: member.path)
            names.append(contentsOf: member.link)
            names.append(contentsOf: member.uname)
            names.append(contentsOf: member.gname)
        }

        /// Sets the last one's data length (its end: the next member's start).
        mutating func setLastEnd(_ end: Int) {
            guard let last = fixed.indices.last else { return }
            fixed[last].dataLength = max(0, end - (fixed[last].headerOffset + fixed[last].headerLength))
        }

        /// Hands each, in order, to `body`; its names are valid during the call.
        package func forEach(_ body: (MemberIndex.Record) -> Void) {
            names.withUnsafeBytes { all in
                var at = 0
                func take(_ count: Int) -> UnsafeRawBufferPointer {
                    defer { at += count }
                    return count == 0 ? UnsafeRawBufferPointer(start: nil, count: 0)
                        : UnsafeRawBufferPointer(rebasing: all[at ..< at + count])
                }
                var record = MemberIndex.Record()
                for one in fixed {
                    (record.headerOffset, record.headerLength, record.dataLength) = (one.headerOffset,
                                                                                     one.headerLength, one.dataLength)
                    (record.size, record.mtime, record.mode) = (one.size, one.mtime, one.mode)
                    (record.uid, record.gid, record.type) = (one.uid, one.gid, one.type)
                    (record.devmajor, record.devminor) = (one.devmajor, one.devminor)
                    (record.path, record.link) = (take(one.path), take(one.link))
                    (record.uname, record.gname) = (take(one.uname), take(one.gname))
                    body(record)
                }
            }
        }
    }
}
