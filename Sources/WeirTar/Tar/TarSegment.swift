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
/// What it keeps: every member it found, coded into the index's columns as
/// it goes (``MemberIndex/ColumnBlock``), for the stitcher to join; the last
/// one's end is where the next member's headers begin (``resume``), or the
/// tar's end blocks.
///
/// Threads: its worker, then the stitcher, in turn.
package final class TarSegment: @unchecked Sendable {  // one thread at a time, in turn (above)
    /// The chunk's offsets in the content.
    package let chunkStart: Int
    package let chunkEnd: Int
    /// Where the walk began: a block that read as a header, or where it was told; nil until one is found.
    package private(set) var start: Int?
    private var walk: TarWalk<MemberIndex.ColumnBlock>
    /// After ``end()``: the members found, in order, coded in columns, each
    /// against the one before it (the first against none).
    package let members: MemberIndex.ColumnBlock
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
        let members = MemberIndex.ColumnBlock()
        self.members = members
        walk = TarWalk(sink: members, at: start ?? 0)
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
                walk = TarWalk(sink: members, at: at)
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
    /// A member whose header blocks straddle `end` (a pax record or a GNU
    /// sparse map of megabytes) is read on to its last header block: the
    /// next chunk's walk then starts past it, not at its first block again
    /// (which made a tar of long headers cost the square of their length).
    ///
    /// - Throws: what `read` throws.
    package func walk(upTo end: Int, read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int)
        throws(WeirError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TarScanner.fileReadSize, alignment: 16)
        defer { buffer.deallocate() }
        try walk.consume(upTo: end, finishingMember: true, buffer: buffer, read: read)
    }

    /// Ends the walk at the chunk's end: ``members``, ``resume`` and
    /// ``stop`` say what it found. Once.
    ///
    /// The last member found, whose end the walk leaves to the next header,
    /// goes to ``members`` too, ending where the next member's header blocks
    /// begin (``resume``), or, when the walk stopped, where it stopped (the
    /// tar's end blocks: a walk that stops otherwise gives no index). A
    /// stitcher keeps a segment only when the next walk begins at its
    /// ``resume``: the end is the one a walk of the whole content gives it.
    package func end() {
        guard !ended else { return }
        ended = true
        guard let start else {
            resume = chunkEnd
            return
        }
        let stop = walk.stop
        self.stop = stop
        let resume = walk.withResume { found, pending in
            let resume = max(found, start)
            if var pending {
                pending.dataLength = max(0, (stop?.offset ?? resume) - pending.dataOffset)
                members.append(pending)
            }
            return resume
        }
        self.resume = resume
    }

    /// Whether `block` reads as a tar header: `ustar` at 257 (POSIX and
    /// GNU), its checksum valid.
    static func readsAsHeader(_ block: UnsafeRawBufferPointer) -> Bool {
        block[257] == UInt8(ascii: "u") && block[258 ..< 262].elementsEqual("star".utf8)
            && TarHeader(block).checksumIsValid
    }
}
