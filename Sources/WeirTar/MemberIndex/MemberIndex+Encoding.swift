import CZstd
import WeirFormats
import WeirSystem

/// Writing the index: the record list (varints, front-coded names), then
/// the skippable frame around its zstd frame (docs/members.md).
extension MemberIndex {
    /// The level the record list is compressed at: it is compressed once,
    /// at the end of a run, after the last frame, so its time adds to the
    /// run's; level 9 would make it 11% smaller (0.16% of the archive instead
    /// of 0.18%) at 7 times the time (bench/results/2026-11-27-members.md).
    package static let defaultLevel = 3

    /// The largest content a skippable frame's u32 size field allows.
    package static let maxFrameContent = Int(UInt32.max)

    /// The index as the bytes of its skippable frame, ready to be written
    /// just before the seek table.
    ///
    /// - Throws: ``WeirError`` `.library` when libzstd fails or the frame
    ///   would pass the 4 GiB a skippable frame can hold.
    package func encoded(level: Int = defaultLevel, path: String) throws(WeirError) -> [UInt8] {
        try Self.frame(records: recordList(), level: level, path: path)
    }

    /// The skippable frame around `records`, a record list.
    package static func frame(records: [UInt8], level: Int, path: String) throws(WeirError) -> [UInt8] {
        let frame = try Self.compressed(records, level: level, path: path)
        let content = Self.contentMagic.count + frame.count
        guard content <= Self.maxFrameContent else {
            throw WeirError.library(path: path, operation: .writeMemberIndex,
                                    "the member index is too large for a skippable frame: \(content) bytes")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + content)
        bytes.append(littleEndian: Self.skippableMagic)
        bytes.append(littleEndian: UInt32(content))
        bytes += Self.contentMagic
        bytes += frame
        return bytes
    }

    /// The record list, uncompressed: the header, then one record per member.
    package func recordList() -> [UInt8] {
        var writer = RecordWriter()
        for member in members { writer.append(member) }
        return writer.recordList(endedEarly: endedEarly, endOffset: endOffset, contentSize: contentSize)
    }

    /// Encodes records one member at a time, as a scan finds them, so that
    /// only the encoded bytes are kept (about 45 bytes a member, where a
    /// ``Member`` value and its four arrays take some 300).
    package struct RecordWriter: Sendable {
        /// The records so far.
        private var body: [UInt8] = []
        /// Where the member before the next ends, and its names, which the
        /// next one's gap and names are coded against: copies kept in the
        /// writer's own storage, so a caller may rewrite its member in place.
        private var previousEnd = 0
        private var previousPath: [UInt8] = []
        private var previousUname: [UInt8] = []
        private var previousGname: [UInt8] = []
        /// The members encoded.
        package private(set) var count = 0

        package init() {}

        /// Encodes `member`, which follows the last one appended.
        package mutating func append(_ member: Member) {
            body.appendUvarint(UInt64(member.headerOffset - previousEnd))
            body.appendUvarint(UInt64(member.headerLength))
            body.appendUvarint(UInt64(member.dataLength))
            body.appendUvarint(UInt64(member.size))
            body.appendUvarint(UInt64(bitPattern: member.mtime << 1 ^ member.mtime >> 63))
            body.appendUvarint(UInt64(member.mode))
            body.appendUvarint(UInt64(member.uid))
            body.appendUvarint(UInt64(member.gid))
            body.append(member.type)
            body.appendFrontCoded(member.path, after: previousPath)
            body.appendString(member.link)
            body.appendFrontCoded(member.uname, after: previousUname)
            body.appendFrontCoded(member.gname, after: previousGname)
            previousEnd = member.end
            Self.keep(member.path, in: &previousPath)
            Self.keep(member.uname, in: &previousUname)
            Self.keep(member.gname, in: &previousGname)
            count += 1
        }

        /// Copies `name` into `kept`, reusing its storage.
        private static func keep(_ name: [UInt8], in kept: inout [UInt8]) {
            guard name != kept else { return }
            kept.removeAll(keepingCapacity: true)
            kept.append(contentsOf: name)
        }

        /// The whole record list: the header, then the records.
        package func recordList(endedEarly: Bool, endOffset: Int, contentSize: Int) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(32 + body.count)
            out.appendUvarint(UInt64(MemberIndex.version))
            out.appendUvarint(endedEarly ? 1 : 0)
            out.appendUvarint(UInt64(count))
            out.appendUvarint(UInt64(endOffset))
            out.appendUvarint(UInt64(contentSize))
            return out + body
        }
    }

    /// `records` as one zstd frame with its content size and XXH64 checksum.
    private static func compressed(_ records: [UInt8], level: Int, path: String) throws(WeirError) -> [UInt8] {
        guard let context = ZSTD_createCCtx() else { throw WeirError.outOfMemory(path: path, operation: .compress) }
        defer { ZSTD_freeCCtx(context) }
        let operation = WeirError.Operation.writeMemberIndex
        try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level)), path: path,
                       operation: operation)
        try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1), path: path, operation: operation)
        try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1), path: path, operation: operation)
        var frame = [UInt8](repeating: 0, count: Zstd.compressBound(records.count))
        let result = frame.withUnsafeMutableBytes { out in
            records.withUnsafeBytes { source in
                ZSTD_compress2(context, out.baseAddress, out.count, source.baseAddress, source.count)
            }
        }
        let written = try Zstd.check(result, path: path, operation: operation)
        frame.removeSubrange(written...)
        return frame
    }
}

extension [UInt8] {
    /// Appends `value` as 4 little-endian bytes.
    package mutating func append(littleEndian value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Appends `value` as an unsigned LEB128 varint.
    package mutating func appendUvarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    /// Appends a string: its length as a varint, then its bytes.
    package mutating func appendString(_ bytes: some Collection<UInt8>) {
        appendUvarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }

    /// Appends `bytes` front-coded against `previous`: the count of leading
    /// bytes they share, then the rest as a string.
    package mutating func appendFrontCoded(_ bytes: [UInt8], after previous: [UInt8]?) {
        var shared = 0
        if let previous {
            let limit = Swift.min(bytes.count, previous.count)
            while shared < limit, bytes[shared] == previous[shared] { shared += 1 }
        }
        appendUvarint(UInt64(shared))
        appendString(bytes[shared...])
    }
}
