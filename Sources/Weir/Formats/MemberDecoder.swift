import CFormats
import CZstd

/// Decodes members (frames) of one format at a time, piece by piece, as
/// the input arrives: zstd through a ``DecompressionContext``, gzip through
/// zlib (a stream must be inflated as it comes, which libdeflate cannot),
/// lz4 through its frame API, xz and .lzma through liblzma. ``start(_:)``
/// begins a member; ``step(_:consumed:into:filled:)`` runs until the input is
/// used, the output is full or the member ends. Each library's state is made
/// once and reset per member. Used by one thread at a time.
final class MemberDecoder {
    private(set) var format: CompressedFormat = .zstd
    private let options: DecompressionOptions
    private let path: String
    private var zstd: DecompressionContext?
    private let zlib: UnsafeMutablePointer<z_stream>
    private var zlibReady = false
    private var lz4: OpaquePointer?
    private let lzma: UnsafeMutablePointer<lzma_stream>

    init(options: DecompressionOptions, path: String) {
        self.options = options
        self.path = path
        zlib = .allocate(capacity: 1)
        zlib.initialize(to: z_stream())
        lzma = .allocate(capacity: 1)
        lzma.initialize(to: lzma_stream())
    }

    deinit {
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
                                                verifyChecksum: options.verifyChecksum, dictionary: dictionary, path: path)
            }
            zstd!.reset()
        case .gzip:
            // 16 + 15: a gzip header and trailer around a window of 32 KiB.
            let code = zlibReady ? inflateReset(zlib) : weir_inflate_init(zlib, 16 + 15)
            guard code == Z_OK else { throw .outOfMemory(path: path, operation: operation, creating: "a gzip decoder") }
            zlibReady = true
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
            // magic number); no memory limit, as xz's default.
            let code = format == .xz ? lzma_stream_decoder(lzma, UInt64.max, 0) : lzma_alone_decoder(lzma, UInt64.max)
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
        case .gzip:
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
}
