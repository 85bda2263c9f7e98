import CZstd
import WeirFormats
import WeirSystem

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
        return try records(frame: frame, path: path, offset: offset).index()
    }

    /// The record list in `frame`, checked whole as ``decode(frame:path:offset:)``
    /// checks it (with `checking`; without, its records are checked by the
    /// first walk, which throws what this would have), but not made into
    /// members: ``Records/forEach(_:)`` walks it.
    ///
    /// - Throws: as ``decode(frame:path:offset:)``.
    /// With `walkingAsDecoded` (and without `checking`), version 2's blocks
    /// are decoded on another thread while the first walk reads them
    /// (``ColumnStream``): that walk throws what decoding would have, and
    /// nothing may be sized by the member count before it.
    package static func records(frame: [UInt8], path: String, offset: Int, checking: Bool = true,
                                walkingAsDecoded: Bool = false) throws(WeirError) -> Records {
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
        // Version 1: a zstd frame follows at once (its magic's first byte,
        // 0x28); version 2: its version number, then the counts, then the stream.
        guard frame.count > start else { throw corrupt("the frame holds no record list") }
        guard frame[start] != 0x28 else {
            return try Records(try decompressed(frame[start...], corrupt: corrupt), checking: checking, path: path,
                               offset: offset)
        }
        // Version 2's columns are walked as they stand: no row is made of them.
        if walkingAsDecoded, !checking {
            let head = try columnsHead(version2: frame[start...], corrupt: corrupt)
            let stream = try ColumnStream(frame: frame, stream: head.stream, declared: head.count, path: path,
                                          offset: offset)
            return Records(stream: stream, flags: head.flags, endOffset: head.endOffset,
                           contentSize: head.contentSize, path: path, offset: offset)
        }
        let list = try columns(version2: frame[start...], corrupt: corrupt)
        return try Records(columns: list.raw, flags: list.flags, count: list.count, endOffset: list.endOffset,
                           contentSize: list.contentSize, checking: checking, path: path, offset: offset)
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
            // Not zeroed first: zstd writes every byte it reports, and only those are kept.
            var result = 0
            let content = [UInt8](unsafeUninitializedCapacity: Int(declared)) { out, initialized in
                result = ZSTD_decompress(out.baseAddress, out.count, source.baseAddress, source.count)
                initialized = ZSTD_isError(result) != 0 ? 0 : min(result, out.count)
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
}
