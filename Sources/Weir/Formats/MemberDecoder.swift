import CFormats
import CZstd

/// Decodes members (frames) of one format at a time, piece by piece, as
/// the input arrives: zstd through a ``DecompressionContext``; gzip through
/// ISA-L's inflate (2.7× zlib's speed on the Linux tarball) when the whole
/// input is one mapped piece, else zlib (ISA-L, fed pieces of a few bytes
/// that then change, fails on valid data: its CRC check catches it, but a
/// pipe's reads may be that small); libdeflate cannot inflate piece by piece;
/// lz4 through its frame API, xz and .lzma through liblzma. ``start(_:)``
/// begins a member; ``step(_:consumed:into:filled:)`` runs until the input is
/// used, the output is full or the member ends. Each library's state is made
/// once and reset per member. Used by one thread at a time.
final class MemberDecoder {
    private(set) var format: CompressedFormat = .zstd
    private let options: DecompressionOptions
    private let path: String
    private var zstd: DecompressionContext?
    /// Whether gzip goes through ISA-L: the input comes as one piece.
    private let wholeInput: Bool
    private let igzip: UnsafeMutablePointer<inflate_state>
    private let zlib: UnsafeMutablePointer<z_stream>
    private var zlibReady = false
    private var lz4: OpaquePointer?
    private let lzma: UnsafeMutablePointer<lzma_stream>

    init(options: DecompressionOptions, path: String, wholeInput: Bool) {
        self.options = options
        self.path = path
        self.wholeInput = wholeInput
        zlib = .allocate(capacity: 1)
        zlib.initialize(to: z_stream())
        // 64-byte aligned, as a C compiler may place it: ISA-L's vector
        // code reads its temporary buffers with aligned loads.
        igzip = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<inflate_state>.size, alignment: 64)
            .bindMemory(to: inflate_state.self, capacity: 1)
        igzip.initialize(to: inflate_state())
        lzma = .allocate(capacity: 1)
        lzma.initialize(to: lzma_stream())
    }

    deinit {
        igzip.deallocate()
        if zlibReady { inflateEnd(zlib) }
        zlib.deallocate()
        LZ4F_freeDecompressionContext(lz4)
        lzma_end(lzma)
        lzma.deallocate()
    }

    /// Begins a member of `format`, at input `offset` (for errors).
    func start(_ format: CompressedFormat, offset: Int, operation: WeirError.Operation) throws(WeirError) {
        self.format = format
        switch format {
        case .zstd:
            if zstd == nil {
                let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
                    try DecompressionDictionary(dictionary)
                }
                zstd = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                verifyChecksum: options.verifyChecksum, dictionary: dictionary,
                                                prefix: options.patchReference, path: path)
            }
            zstd!.reset()
        case .gzip:
            // Header and trailer (CRC-32, ISIZE) checked by the library.
            if wholeInput {
                isal_inflate_init(igzip)
                igzip.pointee.crc_flag = UInt32(ISAL_GZIP)
            } else {
                // 16 + 15: a gzip header and trailer around a window of 32 KiB.
                let code = zlibReady ? inflateReset(zlib) : weir_inflate_init(zlib, 16 + 15)
                guard code == Z_OK else {
                    throw .outOfMemory(path: path, operation: operation, creating: "a gzip decoder")
                }
                zlibReady = true
            }
        case .lz4:
            if lz4 == nil {
                var context: OpaquePointer?
                guard LZ4F_isError(LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))) == 0 else {
                    throw .outOfMemory(path: path, operation: operation, creating: "an lz4 decoder")
                }
                lz4 = context
            } else {
                LZ4F_resetDecompressionContext(lz4)
            }
        case .xz, .lzma:
            // One .xz stream per member (a following one starts with its own
            // magic number). Memory: the window -M allows (128 MiB by default,
            // as for zstd frames) and 16 MiB for the decoder's own state, so
            // a header asking for a 3 GB dictionary is refused, not obeyed
            // (xz -9's needs 65 MiB).
            let limit = options.windowLimit.bytes + (16 << 20)
            let code = format == .xz ? lzma_stream_decoder(lzma, limit, 0) : lzma_alone_decoder(lzma, limit)
            guard code == LZMA_OK else { throw .lzma(code, format, path: path, operation: operation, offset: offset) }
        }
    }

    /// Decodes from `source[consumed...]` into `destination[filled...]`,
    /// advancing both; returns whether the member has ended (and is flushed).
    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int, offset: Int, operation: WeirError.Operation) throws(WeirError) -> Bool {
        let input = source.baseAddress.map { $0 + consumed }
        let inputCount = source.count - consumed
        let output = destination.baseAddress! + filled
        let outputCount = destination.count - filled
        switch format {
        case .zstd:
            do throws(WeirError) {
                return try zstd!.decompressStream(source, consumed: &consumed, into: destination, filled: &filled) == 0
            } catch {
                throw error.located(frame: 0, offset: offset, .trailing)
            }
        case .gzip where !wholeInput:
            zlib.pointee.next_in = UnsafeMutablePointer(mutating: input?.assumingMemoryBound(to: UInt8.self))
            zlib.pointee.avail_in = UInt32(clamping: inputCount)
            zlib.pointee.next_out = output.assumingMemoryBound(to: UInt8.self)
            zlib.pointee.avail_out = UInt32(clamping: outputCount)
            let code = inflate(zlib, Z_NO_FLUSH)
            consumed += min(inputCount, Int(UInt32.max)) - Int(zlib.pointee.avail_in)
            filled += min(outputCount, Int(UInt32.max)) - Int(zlib.pointee.avail_out)
            switch code {
            case Z_STREAM_END: return true
            case Z_OK, Z_BUF_ERROR: return false
            default:
                let message = zlib.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                throw .formatCorrupt(.gzip, path: path, operation: operation, message, offset: offset)
            }
        case .gzip:
            igzip.pointee.next_in = UnsafeMutablePointer(mutating: input?.assumingMemoryBound(to: UInt8.self))
            igzip.pointee.avail_in = UInt32(clamping: inputCount)
            igzip.pointee.next_out = output.assumingMemoryBound(to: UInt8.self)
            igzip.pointee.avail_out = UInt32(clamping: outputCount)
            let code = isal_inflate(igzip)
            consumed += min(inputCount, Int(UInt32.max)) - Int(igzip.pointee.avail_in)
            filled += min(outputCount, Int(UInt32.max)) - Int(igzip.pointee.avail_out)
            guard code >= 0 else {
                throw .formatCorrupt(.gzip, path: path, operation: operation, Self.igzipText(code), offset: offset)
            }
            return igzip.pointee.block_state == ISAL_BLOCK_FINISH
        case .lz4:
            var written = outputCount
            var read = inputCount
            let hint = LZ4F_decompress(lz4, output, &written, input, &read, nil)
            consumed += read
            filled += written
            if LZ4F_isError(hint) != 0 {
                throw .formatCorrupt(.lz4, path: path, operation: operation, String(cString: LZ4F_getErrorName(hint)),
                                     offset: offset)
            }
            return hint == 0
        case .xz, .lzma:
            lzma.pointee.next_in = input?.assumingMemoryBound(to: UInt8.self)
            lzma.pointee.avail_in = inputCount
            lzma.pointee.next_out = output.assumingMemoryBound(to: UInt8.self)
            lzma.pointee.avail_out = outputCount
            let code = lzma_code(lzma, LZMA_RUN)
            consumed += inputCount - lzma.pointee.avail_in
            filled += outputCount - lzma.pointee.avail_out
            switch code {
            case LZMA_STREAM_END: return true
            case LZMA_OK, LZMA_BUF_ERROR: return false
            default: throw .lzma(code, format, path: path, operation: operation, offset: offset)
            }
        }
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
