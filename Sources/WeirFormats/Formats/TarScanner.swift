import WeirSystem
import CArchive
import Dispatch
import Glibc

/// Finds the members of a tar stream while it is compressed, for the member
/// index (docs/members.md, "How the writer finds members").
///
/// Data flow: the compression's reading thread hands every chunk it read,
/// in content order, to ``feed(_:)``, which queues the chunk (a reference:
/// nothing is copied) and returns. A thread of the scanner's own runs
/// libarchive's tar reader (`archive_read_support_format_tar` only, no
/// filters) over those chunks: its read callback gives libarchive each
/// region of the chunks in turn, where the chunk already lies in memory, and
/// its skip callback steps over members' data without libarchive looking at
/// it, so the scan touches the header blocks only. A header's offset is
/// `archive_read_header_position()` (where its first block, a pax or GNU
/// long-name one included, begins); its data starts where libarchive has
/// consumed the headers (`archive_filter_bytes`); it ends where the next
/// header (or the end blocks) begins.
///
/// Bounds: at most ``maxQueued`` chunks wait for the scan; a reader that
/// would queue more waits for it. Chunks held by the queue keep their
/// buffers from the pool a little longer (bench/results/2026-11-27-members.md).
///
/// The scan never fails the compression: a stream that stops being tar, a
/// tar that ends early, a member cut short end the scan, and
/// ``finish(contentSize:)`` returns what it saw, flagged as ended early
/// (nil when it saw no member). After the scan ends, chunks are dropped as
/// they come.
///
/// Threads: ``feed(_:)`` and ``finish(contentSize:)`` on the compression's
/// reading thread (or the thread that runs the pipeline), in that order; the
/// scan on its own thread. Shared state is behind ``state``'s lock; the
/// libarchive handle and the current chunk belong to the scan's thread.
package final class TarScanner: @unchecked Sendable {  // the lock guards `state`; the rest is the scan thread's
    /// Chunks that may wait for the scan: each one held keeps its buffer (or
    /// its mapped pages) alive past its compression, and the scan, which
    /// reads headers only, keeps up with one chunk ahead; two let it fall
    /// behind for a moment without the reader waiting.
    package static let maxQueued = 2

    /// What the reader and the scan share.
    private struct State: Sendable {
        var queue: [Chunk] = []
        /// No more chunks will come (the input ended, or the run failed).
        var inputEnded = false
        /// The scan has ended: chunks are no longer wanted.
        var scanEnded = false
        /// The members found and ended (by the next header), encoded: the
        /// scan's own until it ends, handed over here with `stop`.
        var records = MemberIndex.RecordWriter()
        /// The last member found, whose end is not known yet (set with `stop`).
        var pending: MemberIndex.Member?
        /// Where the scan stopped, and whether the tar ended as a tar does.
        var stop: (offset: Int, clean: Bool)?
    }

    /// A chunk and where it lies in the content.
    private struct Chunk: @unchecked Sendable {  // DispatchData is immutable; not Sendable on Linux
        let data: DispatchData
    }

    private let state = ConditionLock(State())
    /// The scan thread's: the chunk whose regions libarchive reads, and those regions.
    private var current: DispatchData?
    private var regions: [UnsafeRawBufferPointer] = []
    private var regionIndex = 0
    /// Bytes of `regions[regionIndex]` already given to libarchive (or skipped).
    private var regionOffset = 0

    /// Whether `chunk`, the first of a content, starts as a tar stream:
    /// `ustar` at offset 257 of its first block (POSIX ustar and pax write
    /// `ustar\0`, GNU tar `ustar ` ).
    package static func startsTar(_ chunk: DispatchData) -> Bool {
        guard chunk.count >= 512 else { return false }
        let magic = Array("ustar".utf8)
        return chunk.subdata(in: 257 ..< 262).elementsEqual(magic)
    }

    /// Starts the scan; the first chunk comes with ``feed(_:)``.
    package init() {
        DedicatedThread.start(name: "weir.tarscan") { [self] in
            scan()
        }
    }

    /// Queues the next chunk of the content for the scan (no copy); waits
    /// while ``maxQueued`` chunks wait already. Does nothing once the scan ended.
    package func feed(_ chunk: DispatchData) {
        guard chunk.count > 0 else { return }
        state.withLock(when: { $0.queue.count < Self.maxQueued || $0.scanEnded }, broadcast: true) { state in
            if !state.scanEnded { state.queue.append(Chunk(data: chunk)) }
        }
    }

    /// What a scan found: the record list of docs/members.md, ready to be
    /// compressed into the index's frame, and how many members it holds.
    package struct Found: Sendable {
        package let records: [UInt8]
        package let members: Int

        package init(records: [UInt8], members: Int) {
            self.records = records
            self.members = members
        }
    }

    /// Ends the input, waits for the scan, and returns the record list of
    /// what it found in a content of `contentSize` bytes; nil when it found
    /// no member.
    package func finish(contentSize: Int) -> Found? {
        state.withLock(broadcast: true) { $0.inputEnded = true }
        let (writer, pending, stop) = state.withLock(when: { $0.stop != nil }) { state in
            // The scan has ended: its records are taken, not copied.
            defer { state.records = MemberIndex.RecordWriter() }
            return (state.records, state.pending, state.stop)
        }
        // `stop` is set (the wait is for it); no pending member: none found.
        guard let pending, let stop else { return nil }
        return Self.found(writer, last: pending, stop: stop, contentSize: contentSize)
    }

    /// Ends the input after a failure: the scan ends without waiting for it.
    package func abandon() {
        state.withLock(broadcast: true) { $0.inputEnded = true }
    }

    /// The record list of a scan that stopped at `stop`, `last` its last
    /// member: that member ends where the scan stopped, or where the content
    /// ends when it was cut short inside it.
    private static func found(_ writer: MemberIndex.RecordWriter, last: MemberIndex.Member,
                              stop: (offset: Int, clean: Bool), contentSize: Int) -> Found {
        var writer = writer
        var last = last
        let stopOffset = min(stop.offset, contentSize)
        let endsInside = stopOffset <= last.headerOffset || !stop.clean && stopOffset < last.dataOffset
        last.dataLength = max(0, (endsInside ? contentSize : stopOffset) - last.dataOffset)
        writer.append(last)
        let ended = !stop.clean || stopOffset >= contentSize
        let records = writer.recordList(endedEarly: ended, endOffset: ended ? contentSize : stopOffset,
                                        contentSize: contentSize)
        return Found(records: records, members: writer.count)
    }
}

/// The scan, on its own thread.
extension TarScanner {
    /// Runs libarchive's tar reader over the chunks until the tar ends or
    /// fails, then drops what is still queued.
    private func scan() {
        var records = MemberIndex.RecordWriter()
        var last = MemberIndex.Member(headerOffset: 0, headerLength: 0, dataLength: 0, size: 0, path: [])
        let (stop, found) = readHeaders(into: &records, last: &last)
        state.withLock(broadcast: true) {
            $0.records = records
            $0.pending = found ? last : nil
            $0.stop = stop
            $0.scanEnded = true
            $0.queue.removeAll()
        }
        current = nil
        regions = []
    }

    /// Reads every header libarchive finds, encoding each member into
    /// `records` once the next header ends it; `last` is the member whose
    /// end is not known yet (rewritten in place for each header: nothing is
    /// allocated per member). Returns where the scan stopped, whether at the
    /// tar's end blocks (or at the end of the content at a block's
    /// boundary: `clean`, as tar reads it), and whether it found a member.
    private func readHeaders(into records: inout MemberIndex.RecordWriter, last: inout MemberIndex.Member)
        -> (stop: (offset: Int, clean: Bool), found: Bool) {
        guard let archive = archive_read_new() else { return ((0, false), false) }
        defer { archive_read_free(archive) }
        archive_read_support_format_tar(archive)
        // libarchive hands back the client given below and a place for the
        // block; without them, the read fails (ARCHIVE_FATAL) and skips none.
        archive_read_set_read_callback(archive) { _, client, buffer in
            guard let client, let buffer else { return -1 }
            return Unmanaged<TarScanner>.fromOpaque(client).takeUnretainedValue().nextBlock(buffer)
        }
        archive_read_set_skip_callback(archive) { _, client, request in
            guard let client else { return 0 }
            return Unmanaged<TarScanner>.fromOpaque(client).takeUnretainedValue().skip(Int(request))
        }
        archive_read_set_callback_data(archive, Unmanaged.passUnretained(self).toOpaque())
        guard archive_read_open1(archive) == ARCHIVE_OK else { return ((0, false), false) }
        var entry: OpaquePointer?
        var found = false
        while true {
            let result = archive_read_next_header(archive, &entry)
            let position = Int(archive_read_header_position(archive))
            guard result == ARCHIVE_OK || result == ARCHIVE_WARN, let entry else {
                return ((position, result == ARCHIVE_EOF), found)
            }
            // The previous member runs to this header; it is encoded.
            if found {
                last.dataLength = max(0, position - last.dataOffset)
                records.append(last)
            }
            Self.read(entry, into: &last, headerOffset: position,
                      dataOffset: Int(archive_filter_bytes(archive, -1)),
                      gnu: archive_format(archive) == ARCHIVE_FORMAT_TAR_GNUTAR)
            found = true
        }
    }

    /// Rewrites `member` as the record of the member libarchive just read
    /// (its data length set when the next header is found), reusing its
    /// names' storage.
    private static func read(_ entry: OpaquePointer, into member: inout MemberIndex.Member, headerOffset: Int,
                             dataOffset: Int, gnu: Bool) {
        func copy(_ text: UnsafePointer<CChar>?, to bytes: inout [UInt8]) {
            bytes.removeAll(keepingCapacity: true)
            guard let text else { return }
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: text, count: strlen(text)))
        }
        var link: UnsafePointer<CChar>?
        let type: Unicode.Scalar
        if let hardlink = archive_entry_hardlink(entry) {
            type = "1"
            link = hardlink
        } else {
            // libarchive's AE_IF* (the stat modes; macros Swift does not import).
            switch archive_entry_filetype(entry) {
            case 0o120000: type = "2"; link = archive_entry_symlink(entry)
            case 0o020000: type = "3"
            case 0o060000: type = "4"
            case 0o040000: type = "5"
            case 0o010000: type = "6"
            default: type = gnu && archive_entry_sparse_count(entry) > 0 ? "S" : "0"
            }
        }
        // The name as tar stored it: archive_entry_pathname converts nothing.
        copy(archive_entry_pathname(entry) ?? archive_entry_pathname_utf8(entry), to: &member.path)
        copy(link, to: &member.link)
        copy(archive_entry_uname(entry), to: &member.uname)
        copy(archive_entry_gname(entry), to: &member.gname)
        (member.headerOffset, member.headerLength, member.dataLength) =
            (headerOffset, max(512, dataOffset - headerOffset), 0)
        (member.size, member.mtime) = (Int(max(0, archive_entry_size(entry))), Int64(archive_entry_mtime(entry)))
        member.mode = UInt32(archive_entry_perm(entry)) & 0o7777
        (member.uid, member.gid) = (Int(max(0, archive_entry_uid(entry))), Int(max(0, archive_entry_gid(entry))))
        member.type = UInt8(ascii: type)
    }

    /// libarchive's read callback: the rest of the current region, or the
    /// next one, waiting for the next chunk; 0 at the end of the input.
    private func nextBlock(_ buffer: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        guard let region = nextRegion() else { return 0 }
        buffer.pointee = region.baseAddress.map { UnsafeRawPointer($0 + regionOffset) }
        let count = region.count - regionOffset
        regionIndex += 1
        regionOffset = 0
        return count
    }

    /// libarchive's skip callback: steps over up to `request` bytes past
    /// the last block it was given, without reading them.
    private func skip(_ request: Int) -> Int64 {
        var skipped = 0
        while skipped < request, let region = nextRegion() {
            let step = min(request - skipped, region.count - regionOffset)
            skipped += step
            regionOffset += step
            if regionOffset == region.count {
                regionIndex += 1
                regionOffset = 0
            }
        }
        return Int64(skipped)
    }

    /// The region the next byte lies in, the next chunk taken when the
    /// current one is used up (waiting for it); nil at the end of the input.
    private func nextRegion() -> UnsafeRawBufferPointer? {
        while regionIndex >= regions.count {
            let next: Chunk? = state.withLock(when: { !$0.queue.isEmpty || $0.inputEnded }, broadcast: true) {
                $0.queue.isEmpty ? nil : $0.queue.removeFirst()
            }
            guard let next else { return nil }
            // The previous chunk's last region, which libarchive may still
            // read, stays valid: libarchive is done with it once it asks again.
            current = next.data
            regions = []
            // The regions' bytes stay where they are while `current` holds them.
            next.data.enumerateBytes { bytes, _, _ in regions.append(UnsafeRawBufferPointer(bytes)) }
            regionIndex = 0
            regionOffset = 0
        }
        return regions[regionIndex]
    }
}
