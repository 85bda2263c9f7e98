import CFormats
import WeirSystem

/// A gzip member as weir writes it (RFC 1952): a header with one FEXTRA
/// subfield, `Wr`, giving the member's whole size (8 bytes, little-endian),
/// then raw deflate from libdeflate, then CRC-32 and ISIZE. gzip, pigz and
/// zlib skip the subfield (as they skip BGZF's `BC`); weir reads it to find
/// the next member without inflating this one, so its own files decode in
/// parallel (``GzipMemberScan``).
package enum GzipMember {
    /// The header's bytes: 10 fixed, XLEN, the subfield's 4 and its 8.
    static let headerSize = 24
    /// CRC-32 and ISIZE.
    static let trailerSize = 8
    /// The subfield's identifier.
    static let subfieldID: [UInt8] = [0x57, 0x72]  // "Wr"

    /// zstd 1.5.4's mapping: its level given to zlib, at most 9; weir also
    /// keeps it at least 1 (zlib's 0 stores, libdeflate's too).
    static func level(forZstdLevel level: Int) -> Int { max(1, min(level, 9)) }

    /// The most bytes a member of `size` input bytes takes.
    static func bound(_ size: Int) -> Int {
        headerSize + libdeflate_deflate_compress_bound(nil, size) + trailerSize
    }

    /// Writes one member of `input` into `output` (at least ``bound(_:)``).
    static func write(_ input: UnsafeRawBufferPointer, with compressor: OpaquePointer, level: Int,
                      into output: UnsafeMutableRawBufferPointer, path: String) throws(WeirError) -> Int {
        guard let base = output.baseAddress, output.count >= headerSize + trailerSize else {
            throw .formatLibrary(.gzip, path: path, operation: .compress, "the member did not fit its bound")
        }
        let deflated = libdeflate_deflate_compress(compressor, input.baseAddress, input.count,
                                                   base + headerSize, output.count - headerSize - trailerSize)
        guard deflated > 0 else {
            throw .formatLibrary(.gzip, path: path, operation: .compress, "the member did not fit its bound")
        }
        let size = headerSize + deflated + trailerSize
        // XFL: 2 for the slowest levels, 4 for the fastest, as gzip sets it; OS 3: Unix.
        let header: [UInt8] = [0x1f, 0x8b, 8, 0x04, 0, 0, 0, 0, level >= 9 ? 2 : (level == 1 ? 4 : 0), 3,
                               12, 0] + subfieldID + [8, 0] + littleEndian(UInt64(size), bytes: 8)
        header.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: base, count: headerSize).copyMemory(from: $0) }
        let crc = libdeflate_crc32(0, input.baseAddress, input.count)
        let trailer =
            littleEndian(UInt64(crc), bytes: 4) + littleEndian(UInt64(truncatingIfNeeded: input.count), bytes: 4)
        trailer.withUnsafeBytes {
            UnsafeMutableRawBufferPointer(start: base + headerSize + deflated, count: trailerSize).copyMemory(from: $0)
        }
        return size
    }

    /// The whole size of the member that starts `bytes`, when weir wrote it
    /// (its header carries the `Wr` subfield); nil for any other member.
    package static func recordedSize(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= headerSize, bytes[0] == 0x1f, bytes[1] == 0x8b, bytes[2] == 8, bytes[3] == 0x04,
              bytes[10] == 12, bytes[11] == 0, bytes[12] == subfieldID[0], bytes[13] == subfieldID[1],
              bytes[14] == 8, bytes[15] == 0 else { return nil }
        let size = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[16 + $1]) << (8 * $1) }
        guard size >= UInt64(headerSize + trailerSize), size <= UInt64(Int.max) else { return nil }
        return Int(size)
    }

    private static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
