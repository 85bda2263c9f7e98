import Glibc
import WeirSystem

/// What a ``TarWalk`` hands each member to once the member's end is known.
package protocol TarMemberSink {
    /// Takes `member`, the next member in archive order. Its names point
    /// into the walk's buffers, rewritten for the next member: valid
    /// during the call only (``MemberIndex/Record/member()`` keeps a copy).
    mutating func append(_ member: MemberIndex.Record)
}

/// Finds the members of a tar stream from its header blocks, as its bytes
/// go by (docs/members.md, "How the writer finds members"): the writer's
/// scan while it compresses, `weir --index` while it decodes, a resumed
/// run over the input its kept frames hold.
///
/// A state machine over the content's offsets: ``needed`` is the next byte
/// it must see (the next header block, or the next byte of a pax record
/// or GNU long name); the bytes of members' data and padding before it are
/// stepped over without being read. ``consume(_:at:)`` takes the content in
/// pieces of any size, split anywhere (a header block split across two
/// pieces is staged in 512 bytes of its own), and in order; a piece may
/// start past bytes the walk does not need, so a caller with a seekable
/// input can read just the blocks ``needed`` names.
///
/// Members are read as GNU tar and libarchive read them: pax `x` records
/// (path, linkpath, size, uid, gid, uname, gname, mtime, GNU's sparse name
/// and real size) and GNU `L`/`K` long names belong to the member whose
/// header follows them, and count among its header blocks, as do pax `g`
/// and GNU `V` headers (whose content the index does not keep); a GNU
/// sparse (`S`) header's extension blocks too. Links, devices, folders and
/// FIFOs store no data whatever their size field says.
///
/// The walk ends at the first all-zero block (the end of the archive:
/// `clean`, the only clean end), at a block whose checksum fails (the
/// stream stopped being tar), or when ``finish(contentSize:)`` says the
/// content ended before the end blocks (cut short). It never fails: a tar
/// that is not one ends the walk, that is all.
///
/// Cost: a header block's checksum and fields once per member, no
/// allocation per member but for names longer than their storage so far.
/// The names live in raw buffers of the walk's own, not arrays: an array
/// a member paid its uniqueness checks, reference counting and generic
/// copies, a fifth of the scan's cost (issue 82). Hence not copyable: a
/// copy would share them, and the walk frees them when it ends.
package struct TarWalk<Sink: TarMemberSink>: ~Copyable {
    /// Where the members go once their ends are known.
    package private(set) var sink: Sink
    /// The next content offset the walk must see; bytes before it are not read.
    package private(set) var needed = 0
    /// Where the walk stopped and whether the tar ended as a tar does (nil: still walking).
    package private(set) var stop: (offset: Int, clean: Bool)?
    /// Members found so far (the last one's end not yet known among them).
    package private(set) var count = 0

    private enum Phase {
        /// The next 512 bytes are a header block.
        case header
        /// The next `remaining` bytes are the content of a pax record block
        /// or a GNU long name or link (`kind`), then padding to `end`.
        case extensionData(kind: UInt8, remaining: Int, end: Int)
        /// The next block is a GNU sparse header's extension block.
        case sparseExtension
    }

    private var phase = Phase.header
    /// Whether the member being read had a pax `x` header already.
    private var paxSeen = false
    /// A header block split across pieces, staged (512 bytes, the walk's own).
    private let staged = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 16)
    private var stagedCount = 0
    /// The content of the pax record or long name being read.
    private var extensionBytes: [UInt8] = []
    /// Where the member being read begins (its first header block, a pax or
    /// GNU long-name one included); nil between members.
    private var memberStart: Int?
    /// What the blocks before the member's own header said of it.
    private var pax = PaxRecords()
    private var longName: [UInt8]?
    private var longLink: [UInt8]?
    /// Whether a pax record or a GNU long name or link was read for the
    /// member being read (``pax``, ``longName``, ``longLink`` then to reset).
    private var extended = false
    /// The member whose header was read last: its data length is set when
    /// the next header (or the end) is found, then it goes to the sink,
    /// its names pointing into the buffers below.
    private var last = MemberIndex.Record()
    private var lastStoredData = 0
    /// The last member's names, its link target empty but for links.
    private var path = MemberIndex.ColumnBytes(capacity: 256)
    private var link = MemberIndex.ColumnBytes(capacity: 256)
    private var uname = MemberIndex.ColumnBytes(capacity: 32)
    private var gname = MemberIndex.ColumnBytes(capacity: 32)
    /// The header fields ``uname`` and ``gname`` were last read from (nil:
    /// a pax name, or none yet): the same 32 bytes again, as a tar's
    /// members' owners mostly are, give the same name, not read again.
    private var unameField: OwnerField?
    private var gnameField: OwnerField?
    /// The last own header's mode, ids and mtime, as bytes and as read.
    private var repeated = RepeatedFields()

    /// A walk from the content's first byte, or from `start`, where a
    /// member's first header block begins (``TarSegment``: one chunk's
    /// share of the walk).
    package init(sink: Sink, at start: Int = 0) {
        self.sink = sink
        needed = start
    }

    deinit {
        staged.deallocate()
        path.deallocate()
        link.deallocate()
        uname.deallocate()
        gname.deallocate()
    }

    /// Whether the walk wants more content.
    package var isWalking: Bool { stop == nil }

    /// Whether the walk stands between two members: no header block staged,
    /// no member's header blocks (pax records, long names, sparse
    /// extensions) read in part.
    package var isBetweenMembers: Bool {
        guard case .header = phase else { return false }
        return memberStart == nil && stagedCount == 0
    }

    /// Walks on from the input file rather than from memory, to `end`:
    /// `read(offset, buffer)` fills `buffer` with the input's bytes at
    /// `offset` (`pread`), and only the blocks the walk needs are read,
    /// `buffer.count` bytes at a time. With `finishingMember`, a member
    /// whose header blocks straddle `end` (a pax record or a GNU sparse map
    /// of megabytes) is read on to its last header block, so that a walk
    /// starting at `end` need not read them all again. A read of no bytes
    /// (the file ends) stops the loop, not the walk.
    ///
    /// - Throws: what `read` throws.
    package mutating func consume(upTo end: Int, finishingMember: Bool, buffer: UnsafeMutableRawBufferPointer,
                                  read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int)
        throws(WeirError) {
        while isWalking, needed < end || (finishingMember && !isBetweenMembers) {
            let at = needed
            let span = UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< (at < end ? min(buffer.count, end - at)
                                                                                   : buffer.count)])
            let count = try read(at, span)
            guard count > 0 else { return }
            consume(UnsafeRawBufferPointer(rebasing: span[0 ..< count]), at: at)
        }
    }

    /// Takes `bytes`, the content at `offset`: bytes before ``needed`` are
    /// stepped over; a piece that starts past ``needed`` is a gap the walk
    /// cannot cross, and ends it (not clean).
    package mutating func consume(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        guard stop == nil, !bytes.isEmpty else { return }
        guard offset <= needed else {
            stop = (memberStart ?? needed, false)
            return
        }
        let end = offset + bytes.count
        var position = needed
        while position < end, stop == nil {
            if position < needed {
                position = min(needed, end)
                continue
            }
            let at = position - offset
            switch phase {
            case .header, .sparseExtension:
                if stagedCount == 0, end - position >= 512 {
                    // The common case: the whole block lies in this piece.
                    block(UnsafeRawBufferPointer(rebasing: bytes[at ..< at + 512]), at: position)
                    position += 512
                } else {
                    let take = min(512 - stagedCount, end - position)
                    UnsafeMutableRawBufferPointer(rebasing: staged[stagedCount ..< stagedCount + take])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[at ..< at + take]))
                    stagedCount += take
                    position += take
                    needed = position
                    if stagedCount == 512 {
                        stagedCount = 0
                        block(UnsafeRawBufferPointer(staged), at: position - 512)
                    }
                }
            case let .extensionData(kind, remaining, blockEnd):
                let take = min(remaining, end - position)
                extensionBytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[at ..< at + take]))
                position += take
                needed = position
                if take == remaining {
                    finishExtension(kind: kind)
                    phase = .header
                    needed = blockEnd
                } else {
                    phase = .extensionData(kind: kind, remaining: remaining - take, end: blockEnd)
                }
            }
        }
    }

    /// Where the walk stands when the piece of the content it was given
    /// ends before the tar does (``TarSegment``), for `body`: `resume`, the
    /// offset where the next member's header blocks begin (those of the
    /// member in progress when its headers straddle the piece's end), and
    /// the last member found, whose end is `resume` — nil when none is,
    /// or when it is the member whose headers are in progress (a GNU
    /// sparse header's extension blocks): a walk from `resume` reads it
    /// again. Its names point into the walk's buffers: valid during the call.
    package func withResume<Value>(_ body: (_ resume: Int, _ pending: MemberIndex.Record?) -> Value) -> Value {
        let resume = memberStart ?? needed - stagedCount
        if case .sparseExtension = phase { return body(resume, nil) }
        guard count > 0 else { return body(resume, nil) }
        var pending = last
        (pending.path, pending.link, pending.uname, pending.gname) = (path.bytes, link.bytes, uname.bytes, gname.bytes)
        return body(resume, pending)
    }

    /// Ends the walk at the content's end, `contentSize` bytes, and hands
    /// over the last member: it runs to the end blocks, or to the content's
    /// end when the tar was cut short inside it.
    package mutating func finish(contentSize: Int) {
        if stop == nil {
            // The content ended before the tar's end blocks: cut short.
            let atBoundary = needed == contentSize && stagedCount == 0 && memberStart == nil
            if case .header = phase, atBoundary {
                // No end blocks: a tar that stops between members is one
                // cut there (a piece `parallel --pipepart` cut), not whole.
                stop = (contentSize, false)
            } else if case .header = phase, stagedCount > 0, memberStart == nil {
                stop = (needed - stagedCount, false)
            } else {
                stop = (min(memberStart ?? contentSize, contentSize), false)
            }
        }
        guard count > 0, let stop else { return }
        // Cut short inside its headers or data: the member runs to the content's end.
        let stopOffset = min(stop.offset, contentSize)
        let complete = stopOffset >= last.dataOffset + Self.rounded(lastStoredData)
        last.dataLength = max(0, (stop.clean || complete ? stopOffset : contentSize) - last.dataOffset)
        handOver()
    }

    /// The last member to the sink, its names where they are.
    private mutating func handOver() {
        (last.path, last.link, last.uname, last.gname) = (path.bytes, link.bytes, uname.bytes, gname.bytes)
        sink.append(last)
    }

    private static func rounded(_ count: Int) -> Int { TarHeader.blocks(count) ?? Int.max }

    /// One header block at `offset`.
    private mutating func block(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        needed = offset + 512
        let header = TarHeader(bytes)
        if case .sparseExtension = phase {
            // 21 entries of 24 bytes, then whether another block follows.
            if bytes[504] == 0 { memberRead(dataOffset: offset + 512) }
            return
        }
        if header.isZero {
            stop = (memberStart ?? offset, memberStart == nil)
            return
        }
        guard header.checksumIsValid, !header.sizeReadOtherwise, let size = header.size else {
            stop = (memberStart ?? offset, false)
            return
        }
        if memberStart == nil { memberStart = offset }
        let type = header.typeflag
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "L"), UInt8(ascii: "K"), UInt8(ascii: "g"):
            // Read whole (at most what a reader's check takes); a second pax header for one member,
            // which tars merge or replace, ends the walk: tars disagree on the member.
            guard size <= MemberRecordCheck.headerBlocksMost,
                  !((type == UInt8(ascii: "x") || type == UInt8(ascii: "X")) && paxSeen),
                  let end = TarHeader.blocks(size).map({ $0 + offset + 512 }) else {
                stop = (memberStart ?? offset, false)
                return
            }
            if type == UInt8(ascii: "x") || type == UInt8(ascii: "X") { paxSeen = true }
            extensionBytes.removeAll(keepingCapacity: true)
            extended = true
            if size == 0 {
                finishExtension(kind: type)
            } else {
                phase = .extensionData(kind: type, remaining: size, end: end)
            }
        case UInt8(ascii: "A"):
            // Solaris ACLs: GNU tar makes a file of it, libarchive reads it as the next member's headers.
            stop = (memberStart ?? offset, false)
        case UInt8(ascii: "V"):
            // A volume label: header blocks of the next member.
            guard let data = TarHeader.blocks(size) else {
                stop = (memberStart ?? offset, false)
                return
            }
            needed = offset + 512 + data
        default:
            member(header, type: type, size: size, at: offset)
        }
    }

    /// A pax record block or GNU long name read whole.
    private mutating func finishExtension(kind: UInt8) {
        switch kind {
        case UInt8(ascii: "g"):
            // Global pax records: header blocks of the next member, read only to see that they change
            // no member (PaxRecords.setsIndexedField); one that does, or that tars read otherwise, ends
            // the walk, not clean.
            let global = extensionBytes.withUnsafeBytes { PaxRecords($0) }
            if global.setsIndexedField || global.malformed { stop = (memberStart ?? needed, false) }
        case UInt8(ascii: "L"), UInt8(ascii: "K"):
            // A second one for the member: GNU tar takes the last, python the first.
            if (kind == UInt8(ascii: "L") ? longName : longLink) != nil {
                stop = (memberStart ?? needed, false)
                return
            }
            let name = Array(extensionBytes.prefix { $0 != 0 })
            if kind == UInt8(ascii: "L") { longName = name } else { longLink = name }
        default:
            extensionBytes.withUnsafeBytes { pax = PaxRecords($0) }
            if pax.malformed { stop = (memberStart ?? needed, false) }
        }
    }

    /// A member's own header block at `offset`.
    private mutating func member(_ header: TarHeader, type raw: UInt8, size field: Int, at offset: Int) {
        // The previous member runs to this member's first header block.
        let start = memberStart ?? offset
        if count > 0 {
            last.dataLength = max(0, start - last.dataOffset)
            handOver()
        }
        count += 1
        // A GNU long name and a pax path (or long link and linkpath) for one member: GNU tar takes the
        // pax one, python the GNU one; tars disagree on the name, so no index.
        if extended, (longName != nil && (pax.path != nil || pax.sparseName != nil))
            || (longLink != nil && pax.linkpath != nil) {
            stop = (memberStart ?? offset, false)
            return
        }
        let storedSize = extended ? pax.size ?? field : field
        let stored = TarHeader.storedData(type: raw, size: storedSize)
        if extended, let name = TarHeader.extendedName(pax: pax.sparseName ?? pax.path, longName: longName) {
            name.withUnsafeBytes { path.set($0) }
        } else if header.block[345] != 0, header.isPOSIX {
            // POSIX's prefix and name joined by '/' (``TarHeader/path``).
            path.set(header.text(345, 155))
            path.append(UInt8(ascii: "/"))
            path.append(header.text(0, 100))
        } else {
            path.set(header.text(0, 100))
        }
        // A v7 header names a folder by a trailing slash only.
        let type = TarHeader.indexedType(raw, path: path.bytes)
        if TarHeader.readOtherwise(raw: raw, indexed: type, stored: stored) != nil {
            // Tars disagree on what follows it: the walk ends, not clean (no index is written);
            // the member half made here is past the end and never kept.
            stop = (start, false)
            return
        }
        if type == UInt8(ascii: "1") || type == UInt8(ascii: "2") {
            if extended, let target = pax.linkpath ?? longLink {
                target.withUnsafeBytes { link.set($0) }
            } else {
                link.set(header.text(157, 100))
            }
        } else {
            link.removeAll()
        }
        if extended, let name = pax.uname {
            name.withUnsafeBytes { uname.set($0) }
            unameField = nil
        } else {
            Self.owner(header, at: 265, into: &uname, from: &unameField)
        }
        if extended, let name = pax.gname {
            name.withUnsafeBytes { gname.set($0) }
            gnameField = nil
        } else {
            Self.owner(header, at: 297, into: &gname, from: &gnameField)
        }
        last.size = TarHeader.indexedSize(type: type, stored: storedSize,
                                          sparseRealSize: extended ? pax.sparseRealSize : nil,
                                          gnuRealSize: type == UInt8(ascii: "S") ? header.gnuRealSize : 0)
        repeated.read(header)
        last.mtime = extended ? pax.mtime ?? repeated.mtime : repeated.mtime
        last.mode = repeated.mode
        last.uid = extended ? pax.uid ?? repeated.uid : repeated.uid
        last.gid = extended ? pax.gid ?? repeated.gid : repeated.gid
        last.type = type
        if type == UInt8(ascii: "3") || type == UInt8(ascii: "4") {
            (last.devmajor, last.devminor) = (header.devmajor, header.devminor)
        } else {
            (last.devmajor, last.devminor) = (0, 0)
        }
        last.headerOffset = start
        lastStoredData = stored
        if raw == UInt8(ascii: "S"), header.gnuSparseExtended {
            phase = .sparseExtension
            return
        }
        memberRead(dataOffset: offset + 512)
    }

    /// `name` becomes the text of the 32-byte owner field at `offset` of
    /// `header`, unless `field`, the field it was last read from, is these
    /// very bytes.
    @inline(__always)
    private static func owner(_ header: TarHeader, at offset: Int, into name: inout MemberIndex.ColumnBytes,
                              from field: inout OwnerField?) {
        let now = OwnerField(header, at: offset)
        if let field, field == now { return }
        name.set(header.text(offset, 32))
        field = now
    }

    /// The member's headers end at `dataOffset`: its data is stepped over.
    private mutating func memberRead(dataOffset: Int) {
        phase = .header
        last.headerLength = dataOffset - last.headerOffset
        last.dataLength = 0
        let (end, overflow) = dataOffset.addingReportingOverflow(Self.rounded(lastStoredData))
        needed = overflow ? Int.max : end
        memberStart = nil
        paxSeen = false
        if extended {
            pax = PaxRecords()
            longName = nil
            longLink = nil
            extended = false
        }
    }
}

/// The 32 bytes of a header's owner field (uname or gname), to tell
/// whether the next header's are the same.
private struct OwnerField: Equatable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    /// The field at `offset` of `header` (265 or 297: inside the block's 512 bytes).
    @inline(__always)
    init(_ header: TarHeader, at offset: Int) {
        let block = header.block
        words = (block.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                 block.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self),
                 block.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self),
                 block.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
    }

    @inline(__always)
    static func == (a: Self, b: Self) -> Bool {
        (a.words.0 ^ b.words.0) | (a.words.1 ^ b.words.1) | (a.words.2 ^ b.words.2) | (a.words.3 ^ b.words.3) == 0
    }
}

/// A member's own header's mode, uid, gid (bytes 100 ..< 124) and mtime
/// (136 ..< 148), as bytes and as read. A tar's members mostly repeat them
/// (one owner, a few modes; git archive gives every member the commit's
/// time): the same bytes as the last header's are not read again, which
/// saved the scan about 230 instructions a member on the Linux tarball.
private struct RepeatedFields {
    private var ids: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private var time: (UInt64, UInt32) = (0, 0)
    /// Whether a header was read yet (before it, the values below are not its).
    private var started = false
    private(set) var mode: UInt32 = 0
    private(set) var uid = 0
    private(set) var gid = 0
    private(set) var mtime: Int64 = 0

    /// The fields of `header`, read only where its bytes differ from the last header's.
    @inline(__always)
    mutating func read(_ header: TarHeader) {
        let block = header.block
        // Every load lies inside the block's 512 bytes (below 148).
        let ids = (block.loadUnaligned(fromByteOffset: 100, as: UInt64.self),
                   block.loadUnaligned(fromByteOffset: 108, as: UInt64.self),
                   block.loadUnaligned(fromByteOffset: 116, as: UInt64.self))
        if !started || ids != self.ids {
            self.ids = ids
            (mode, uid, gid) = (header.mode, header.uid, header.gid)
        }
        let time = (block.loadUnaligned(fromByteOffset: 136, as: UInt64.self),
                    block.loadUnaligned(fromByteOffset: 144, as: UInt32.self))
        if !started || time != self.time {
            self.time = time
            mtime = header.mtime
        }
        started = true
    }
}
