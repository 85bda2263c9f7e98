import CFormats
import WeirSystem

/// gzip members, header and trailer (CRC-32, ISIZE) checked by the library:
/// through ISA-L's inflate (faster than zlib: docs/decompression.md) when the
/// whole input is one mapped piece, else zlib (ISA-L, fed pieces of a few
/// bytes that then change, fails on valid data: its CRC check catches it,
/// but a pipe's reads may be that small); libdeflate cannot inflate piece
/// by piece. ISA-L reads its 32 KiB of history just before where it
/// writes: the output keeps it (``MixedStreamDecoder/history``).
final class GzipMemberDecoder: MemberDecoding {
    private let path: String
    private let operation: WeirError.Operation
    /// Whether the input comes as one piece: then ISA-L, else zlib.
    private let wholeInput: Bool
    private let igzip: UnsafeMutablePointer<inflate_state>
    private let zlib: UnsafeMutablePointer<z_stream>
    private var zlibReady = false
    private var offset = 0

    var format: CompressedFormat { .gzip }

    init(path: String, operation: WeirError.Operation, wholeInput: Bool) {
        self.path = path
        self.operation = operation
        self.wholeInput = wholeInput
        zlib = .allocate(capacity: 1)
        zlib.initialize(to: z_stream())
        // 64-byte aligned, as a C compiler may place it: ISA-L's vector
        // code reads its temporary buffers with aligned loads.
        igzip = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<inflate_state>.size, alignment: 64)
            .bindMemory(to: inflate_state.self, capacity: 1)
        igzip.initialize(to: inflate_state())
    }

    deinit {
        igzip.deallocate()
        if zlibReady { inflateEnd(zlib) }
        zlib.deallocate()
    }

    func start(at offset: Int) throws(WeirError) {
        self.offset = offset
        if wholeInput {
            isal_inflate_init(igzip)
            igzip.pointee.crc_flag = UInt32(ISAL_GZIP)
            return
        }
        // 16 + 15: a gzip header and trailer around a window of 32 KiB.
        let code = zlibReady ? inflateReset(zlib) : weir_inflate_init(zlib, 16 + 15)
        guard code == Z_OK else { throw .outOfMemory(path: path, operation: operation, creating: "a gzip decoder") }
        zlibReady = true
    }

    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int) throws(WeirError) -> Bool {
        let input = source.baseAddress.map { $0 + consumed }?.assumingMemoryBound(to: UInt8.self)
        let inputCount = source.count - consumed
        let output = destination.baseAddress.map { $0 + filled }?.assumingMemoryBound(to: UInt8.self)
        let outputCount = destination.count - filled
        if wholeInput {
            igzip.pointee.next_in = UnsafeMutablePointer(mutating: input)
            igzip.pointee.avail_in = UInt32(clamping: inputCount)
            igzip.pointee.next_out = output
            igzip.pointee.avail_out = UInt32(clamping: outputCount)
            let code = isal_inflate(igzip)
            consumed += min(inputCount, Int(UInt32.max)) - Int(igzip.pointee.avail_in)
            filled += min(outputCount, Int(UInt32.max)) - Int(igzip.pointee.avail_out)
            guard code >= 0 else {
                if code == ISAL_INCORRECT_CHECKSUM, lengthAlone(source, trailerEnd: consumed) {
                    throw corrupt("incorrect length check")
                }
                throw corrupt(Self.igzipText(code))
            }
            return igzip.pointee.block_state == ISAL_BLOCK_FINISH
        }
        zlib.pointee.next_in = UnsafeMutablePointer(mutating: input)
        zlib.pointee.avail_in = UInt32(clamping: inputCount)
        zlib.pointee.next_out = output
        zlib.pointee.avail_out = UInt32(clamping: outputCount)
        let code = inflate(zlib, Z_NO_FLUSH)
        consumed += min(inputCount, Int(UInt32.max)) - Int(zlib.pointee.avail_in)
        filled += min(outputCount, Int(UInt32.max)) - Int(zlib.pointee.avail_out)
        switch code {
        case Z_STREAM_END: return true
        case Z_OK, Z_BUF_ERROR: return false
        default: throw corrupt(zlib.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)")
        }
    }

    /// Whether ISA-L's failed trailer check (one code for both fields) is
    /// of the length (ISIZE) alone: the trailer, the 8 bytes it took last,
    /// holds the CRC-32 it computed. zlib, which decodes a pipe, tells the
    /// two apart and checks the CRC first; so the same member reads the
    /// same from a file and from a pipe.
    private func lengthAlone(_ source: UnsafeRawBufferPointer, trailerEnd end: Int) -> Bool {
        guard end >= 8 else { return false }
        let trailer = source[(end - 8) ..< end].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return UInt32(truncatingIfNeeded: trailer) == igzip.pointee.crc
            && UInt32(truncatingIfNeeded: trailer >> 32) != igzip.pointee.total_out
    }

    func corrupt(_ detail: String) -> WeirError {
        .formatCorrupt(.gzip, path: path, operation: operation, detail, offset: offset)
    }

    /// ISA-L's error codes, in gzip's and zlib's words where they have one.
    private static func igzipText(_ code: Int32) -> String {
        switch code {
        case ISAL_INVALID_BLOCK: "invalid block type"
        case ISAL_INVALID_SYMBOL: "invalid code"
        case ISAL_INVALID_LOOKBACK: "invalid distance too far back"
        case ISAL_INVALID_WRAPPER: "invalid gzip header"
        case ISAL_UNSUPPORTED_METHOD: "unknown compression method"
        case ISAL_INCORRECT_CHECKSUM: "incorrect data check"
        default: "inflate error \(code)"
        }
    }
}
