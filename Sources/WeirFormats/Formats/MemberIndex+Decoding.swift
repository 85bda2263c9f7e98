import WeirSystem
import CZstd

/// Reading the index back from its skippable frame's bytes, refusing every
/// frame that is not exactly what docs/members.md says, with the file and
/// the frame's offset: never a record list half believed.
extension MemberIndex {
    /// The most content a zstd frame of `n` bytes can declare and still be
    /// real: a 3-byte RLE block header stands for at most 128 KiB.
    package static let maxExpansion = 43_691

    /// The index in `frame`, the whole skippable frame (magic and size
    /// included) as it stands at `offset` in the file `path`.
    ///
    /// - Throws: ``WeirError`` `.corrupt` ("corrupt member index at offset
    ///   N: …") for a wrong magic or size, a zstd frame without its content
    ///   size or checksum, a checksum that fails, bytes after the frame, a
    ///   varint that runs past the end, another version, offsets that
    ///   overflow or pass the end offset, or bytes after the last record.
    package static func decode(frame: [UInt8], path: String, offset: Int) throws(WeirError) -> MemberIndex {
        func corrupt(_ detail: String) -> WeirError { .corruptMemberIndex(path: path, offset: offset, detail) }
        let skippable = 8, start = skippable + contentMagic.count
        guard frame.count >= start else { throw corrupt("the frame is \(frame.count) bytes, too short") }
        let magic = frame.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian }
        guard magic == skippableMagic else {
            throw corrupt("the frame's magic is 0x\(String(magic, radix: 16, uppercase: true)), not 0x184D2A5B")
        }
        let size = frame.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian }
        guard Int(size) == frame.count - skippable else {
            throw corrupt("the frame declares \(size) bytes of content, but holds \(frame.count - skippable)")
        }
        guard Array(frame[skippable ..< start]) == contentMagic else {
            throw corrupt("the frame's content does not begin with WEIRTARI")
        }
        let records = try decompressed(frame[start...], corrupt: corrupt)
        return try parse(records, corrupt: corrupt)
    }

    /// The content of the one zstd frame that `bytes` must be, exactly.
    private static func decompressed(_ bytes: ArraySlice<UInt8>, corrupt: (String) -> WeirError)
        throws(WeirError) -> [UInt8] {
        try bytes.withUnsafeBytes { source in Result { () throws(WeirError) in
            guard let header = FrameHeader(startOf: source) else {
                throw corrupt("the record list is not a zstd frame")
            }
            guard let declared = header.contentSize, header.hasChecksum else {
                throw corrupt("the record list's zstd frame lacks its content size or checksum")
            }
            let length = ZSTD_findFrameCompressedSize(source.baseAddress, source.count)
            guard ZSTD_isError(length) == 0, length == source.count else {
                throw corrupt(ZSTD_isError(length) != 0 ? "the record list's zstd frame is cut short"
                                                        : "\(source.count - length) bytes follow the record list")
            }
            guard declared <= UInt64(source.count) * UInt64(maxExpansion) else {
                throw corrupt("the record list's zstd frame declares \(declared) bytes, more than it can hold")
            }
            var content = [UInt8](repeating: 0, count: Int(declared))
            let result = content.withUnsafeMutableBytes { out in
                ZSTD_decompress(out.baseAddress, out.count, source.baseAddress, source.count)
            }
            if ZSTD_isError(result) != 0 {
                throw corrupt("the record list does not decode: " + String(cString: ZSTD_getErrorName(result)))
            }
            guard UInt64(result) == declared else {
                throw corrupt("the record list decodes to \(result) bytes, not the \(declared) it declares")
            }
            return content
        } }.get()
    }

    /// The index in the decoded record list.
    private static func parse(_ bytes: [UInt8], corrupt: @escaping (String) -> WeirError)
        throws(WeirError) -> MemberIndex {
        var reader = RecordReader(bytes: bytes, corrupt: corrupt)
        let version = try reader.uvarint()
        guard version == UInt64(Self.version) else {
            throw corrupt("version \(version) of the record list is not one this weir reads (\(Self.version))")
        }
        let flags = try reader.uvarint()
        let count = try reader.uvarint()
        let endOffset = try reader.offset()
        let contentSize = try reader.offset()
        guard endOffset <= contentSize else {
            throw corrupt("the end offset \(endOffset) passes the content size \(contentSize)")
        }
        // A record takes at least 15 bytes: a count larger than the bytes
        // left is a lie, refused before it reserves memory.
        guard count <= UInt64(bytes.count - reader.position) / 15 else {
            throw corrupt("it declares \(count) members, more than its \(bytes.count) bytes can hold")
        }
        var members: [Member] = []
        members.reserveCapacity(Int(count))
        for index in 0 ..< Int(count) {
            let member = try reader.member(after: members.last, endOffset: endOffset, index: index)
            members.append(member)
        }
        guard reader.position == bytes.count else {
            throw corrupt("\(bytes.count - reader.position) bytes follow the last member's record")
        }
        return MemberIndex(members: members, endedEarly: flags & 1 != 0, endOffset: endOffset,
                           contentSize: contentSize)
    }

    /// A cursor over the record list; every read past its end, every value
    /// too large for an `Int`, is refused.
    private struct RecordReader {
        let bytes: [UInt8]
        let corrupt: (String) -> WeirError
        var position = 0

        init(bytes: [UInt8], corrupt: @escaping (String) -> WeirError) {
            self.bytes = bytes
            self.corrupt = corrupt
        }

        mutating func uvarint() throws(WeirError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard position < bytes.count else {
                    throw corrupt("a varint runs past the end of the record list at byte \(position)")
                }
                let byte = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || byte <= 1 else {
                    throw corrupt("a varint at byte \(position - 1) is larger than 64 bits")
                }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }

        /// A uvarint that fits an `Int` (an offset, a length, a size).
        mutating func offset() throws(WeirError) -> Int {
            let value = try uvarint()
            guard value <= UInt64(Int.max) else { throw corrupt("a value at byte \(position) is out of range") }
            return Int(value)
        }

        mutating func byte() throws(WeirError) -> UInt8 {
            guard position < bytes.count else { throw corrupt("a record runs past the end of the record list") }
            position += 1
            return bytes[position - 1]
        }

        mutating func string() throws(WeirError) -> [UInt8] {
            Array(try stringBytes())
        }

        /// The next string's bytes, where they lie in the record list.
        mutating func stringBytes() throws(WeirError) -> ArraySlice<UInt8> {
            let length = try offset()
            guard length <= bytes.count - position else {
                throw corrupt("a string of \(length) bytes runs past the end of the record list")
            }
            position += length
            return bytes[position - length ..< position]
        }

        mutating func frontCoded(after previous: [UInt8]?) throws(WeirError) -> [UInt8] {
            let shared = try offset()
            guard shared <= previous?.count ?? 0 else {
                throw corrupt("a name shares \(shared) bytes with a previous one of \(previous?.count ?? 0)")
            }
            let rest = try stringBytes()
            // A name equal to the previous one (an owner, a group) shares its storage: no copy.
            if let previous, rest.isEmpty, shared == previous.count { return previous }
            var name: [UInt8] = []
            name.reserveCapacity(shared + rest.count)
            if let previous { name += previous[..<shared] }
            name += rest
            return name
        }

        /// The next member's record; `index` and the offsets for the messages.
        mutating func member(after previous: Member?, endOffset: Int, index: Int) throws(WeirError) -> Member {
            let (gap, headerLength, dataLength) = (try offset(), try offset(), try offset())
            let base = previous?.end ?? 0
            let (start, o1) = base.addingReportingOverflow(gap)
            let (dataStart, o2) = start.addingReportingOverflow(headerLength)
            let (end, o3) = dataStart.addingReportingOverflow(dataLength)
            guard !(o1 || o2 || o3), end <= endOffset else {
                throw corrupt("member \(index) runs past the end offset \(endOffset)")
            }
            guard headerLength >= 512, headerLength % 512 == 0 else {
                throw corrupt("member \(index)'s headers are \(headerLength) bytes, not whole 512-byte blocks")
            }
            let size = try offset()
            let zigzag = try uvarint()
            let mtime = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            let mode = try uvarint()
            guard mode <= 0o7777 else { throw corrupt("member \(index)'s mode \(mode) is out of range") }
            let (uid, gid, type) = (try offset(), try offset(), try byte())
            let path = try frontCoded(after: previous?.path)
            let link = try string()
            let uname = try frontCoded(after: previous?.uname)
            let gname = try frontCoded(after: previous?.gname)
            return Member(headerOffset: start, headerLength: headerLength, dataLength: dataLength, size: size,
                          mtime: mtime, mode: UInt32(mode), uid: uid, gid: gid, type: type, path: path, link: link,
                          uname: uname, gname: gname)
        }
    }
}
