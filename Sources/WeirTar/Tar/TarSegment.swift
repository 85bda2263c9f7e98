import Glibc
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
                let one = Records()
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

    /// Members kept with their names, for a stitcher to hand on in order:
    /// packed as varints in a raw buffer, each against the one before
    /// (offsets as gaps, an owner name the same as the last one's as one
    /// byte), about 35 bytes a member on the Linux tarball where fields at
    /// full width took 180: the walks of the chunks in flight are held at
    /// once, and each byte of theirs added to the run's peak. A raw buffer,
    /// not an array: an array's appends cost ~1,500 instructions a member
    /// (uniqueness checks, generic copies), as much as the walk itself.
    ///
    /// Threads: one at a time (its walk's worker, then the stitcher).
    package final class Records: TarMemberSink, @unchecked Sendable {  // one thread at a time (above)
        private var bytes = MemberIndex.ColumnBytes(capacity: 4096)
        private var lastUname = MemberIndex.ColumnBytes(capacity: 32)
        private var lastGname = MemberIndex.ColumnBytes(capacity: 32)
        /// The last one's end, the next one's gap is from.
        private var lastEnd = 0
        /// Where the last one's data length lies in ``bytes`` (8 bytes, set
        /// again by ``setLastEnd(_:)``), and where its data begins.
        private var lastDataLength = 0
        private var lastDataStart = 0
        package private(set) var count = 0

        package init() {}

        deinit {
            bytes.deallocate()
            lastUname.deallocate()
            lastGname.deallocate()
        }

        package func append(_ member: MemberIndex.Record) {
            // The buffers as locals, stored back once: a class's stored property changed in place costs a
            // dynamic exclusivity check per call (a tenth of the walk's cost, issue 82).
            var bytes = bytes, lastUname = lastUname, lastGname = lastGname
            defer { (self.bytes, self.lastUname, self.lastGname) = (bytes, lastUname, lastGname) }
            bytes.appendUvarint(UInt64(max(0, member.headerOffset - lastEnd)))
            bytes.appendUvarint(UInt64(member.headerLength))
            lastDataLength = bytes.count
            lastDataStart = member.headerOffset + member.headerLength
            withUnsafeBytes(of: UInt64(max(0, member.dataLength)).littleEndian) { bytes.append($0) }
            bytes.appendUvarint(UInt64(member.size))
            bytes.appendUvarint(UInt64(bitPattern: member.mtime << 1 ^ member.mtime >> 63))
            bytes.appendUvarint(UInt64(member.mode))
            bytes.appendUvarint(UInt64(member.uid))
            bytes.appendUvarint(UInt64(member.gid))
            bytes.append(member.type)
            bytes.appendUvarint(UInt64(member.devmajor))
            bytes.appendUvarint(UInt64(member.devminor))
            bytes.appendUvarint(UInt64(member.path.count))
            bytes.append(member.path)
            bytes.appendUvarint(UInt64(member.link.count))
            bytes.append(member.link)
            Self.appendOwner(member.uname, last: &lastUname, to: &bytes)
            Self.appendOwner(member.gname, last: &lastGname, to: &bytes)
            lastEnd = lastDataStart + max(0, member.dataLength)
            count += 1
        }

        /// An owner name: 0 when it is the last one's, else its length + 1 and its bytes.
        @inline(__always)
        private static func appendOwner(_ name: UnsafeRawBufferPointer, last: inout MemberIndex.ColumnBytes,
                                        to bytes: inout MemberIndex.ColumnBytes) {
            if name.count == last.count, name.isEmpty
                || name.baseAddress.map({ memcmp($0, last.base, name.count) == 0 }) == true {
                bytes.append(0)
                return
            }
            bytes.appendUvarint(UInt64(name.count + 1))
            bytes.append(name)
            last.set(name)
        }

        /// Sets the last one's data length: it ends at `end` (the next member's start).
        func setLastEnd(_ end: Int) {
            guard count > 0 else { return }
            let length = max(0, end - lastDataStart)
            UnsafeMutableRawPointer(bytes.base + lastDataLength).storeBytes(of: UInt64(length).littleEndian,
                                                                           as: UInt64.self)
            lastEnd = lastDataStart + length
        }

        /// Hands each, in order, to `body`; its names are valid during the call.
        package func forEach(_ body: (MemberIndex.Record) -> Void) {
            let all = bytes.bytes
            var at = 0
            @inline(__always) func uvarint() -> Int {
                var value: UInt64 = 0, shift: UInt64 = 0
                while at < all.count {
                    let byte = all[at]
                    at += 1
                    value |= UInt64(byte & 0x7F) << shift
                    if byte < 0x80 { break }
                    shift += 7
                }
                return Int(truncatingIfNeeded: value)
            }
            @inline(__always) func take(_ count: Int) -> UnsafeRawBufferPointer {
                defer { at += count }
                return UnsafeRawBufferPointer(rebasing: all[at ..< at + count])
            }
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            var record = MemberIndex.Record()
            var (uname, gname, end) = (empty, empty, 0)
            for _ in 0 ..< count {
                record.headerOffset = end + uvarint()
                record.headerLength = uvarint()
                record.dataLength = Int(truncatingIfNeeded: UInt64(littleEndian: all.loadUnaligned(
                    fromByteOffset: at, as: UInt64.self)))
                at += 8
                record.size = uvarint()
                let zigzag = UInt64(truncatingIfNeeded: uvarint())
                record.mtime = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
                record.mode = UInt32(truncatingIfNeeded: uvarint())
                (record.uid, record.gid) = (uvarint(), uvarint())
                record.type = all[at]
                at += 1
                (record.devmajor, record.devminor) = (uvarint(), uvarint())
                record.path = take(uvarint())
                record.link = take(uvarint())
                let unameCount = uvarint()
                if unameCount > 0 { uname = take(unameCount - 1) }
                let gnameCount = uvarint()
                if gnameCount > 0 { gname = take(gnameCount - 1) }
                (record.uname, record.gname) = (uname, gname)
                end = record.headerOffset + record.headerLength + record.dataLength
                body(record)
            }
        }
    }
}
