import CFormats
import WeirSystem

/// The calls into libdeflate, liblz4 and liblzma that decode one member of
/// another format whole, in one call, into a buffer of its size: what the
/// engine's parallel member decoders (`GzipMemberScan`, `Lz4FrameScan`,
/// `XzStreamScan`, in WeirPipeline) run on their workers. The engine finds the
/// members and schedules them; the codec calls stay in the codec layer.
///
/// One per decoding worker: libdeflate's decompressor and liblz4's context
/// are made the first time a member of their format comes, then reused
/// (liblzma's one-call decoder makes its own state). Used by one thread at
/// a time.
package final class WholeMemberCodec {
    /// The file named in the errors.
    private let path: String
    /// libdeflate's decompressor, once a gzip member came.
    private var gzip: OpaquePointer?
    /// liblz4's decompression context, once an lz4 frame came.
    private var lz4: OpaquePointer?

    package init(path: String) {
        self.path = path
    }

    deinit {
        if let gzip { libdeflate_free_decompressor(gzip) }
        if let lz4 { LZ4F_freeDecompressionContext(lz4) }
    }

    /// How one inflation of a gzip member ended.
    package enum Inflation {
        /// It inflated, taking `consumed` bytes of input to `produced` of content.
        case inflated(consumed: Int, produced: Int)
        /// Its content is larger than the output buffer.
        case outputTooSmall
        /// It does not inflate.
        case damaged
    }

    /// Inflates the gzip member that starts `input` into `output`, of
    /// `capacity` bytes, with the worker's libdeflate decompressor.
    package func inflateGzip(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer,
                             capacity: Int) throws(WeirError) -> Inflation {
        let inflater = try gzipInflater()
        var (consumed, produced) = (0, 0)
        switch libdeflate_gzip_decompress_ex(inflater, input.baseAddress, input.count, output, capacity,
                                             &consumed, &produced) {
        case LIBDEFLATE_SUCCESS: return .inflated(consumed: consumed, produced: produced)
        case LIBDEFLATE_INSUFFICIENT_SPACE: return .outputTooSmall
        default: return .damaged
        }
    }

    /// Decodes the lz4 frame of `size` bytes that starts `input` into
    /// `output`, which holds its declared `content` bytes exactly: nil when
    /// it decodes to exactly that, or why not.
    package func decodeLz4Frame(_ input: UnsafeRawBufferPointer, size: Int, into output: UnsafeMutableRawPointer,
                                content: Int) throws(WeirError) -> String? {
        let decoder = try lz4Decoder()
        var (produced, consumed) = (content, size)
        let code = LZ4F_decompress(decoder, output, &produced, input.baseAddress, &consumed, nil)
        guard LZ4F_isError(code) != 0 || code != 0 || consumed != size || produced != content else { return nil }
        return LZ4F_isError(code) != 0 ? String(cString: LZ4F_getErrorName(code))
            : "the frame does not decode to its declared size"
    }

    /// The .xz header magic number, which starts every stream.
    package static let xzHeaderMagic: [UInt8] = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]

    /// The .xz streams that make up `bytes` exactly, in order (each one's
    /// start, size and content size); nil when it is not made of .xz
    /// streams alone. Found from the end backwards: each footer gives its
    /// index's size, the index the stream's whole size and content size
    /// (liblzma's own parsers, nothing decoded).
    package static func xzStreams(_ bytes: UnsafeRawBufferPointer) -> [(start: Int, size: Int, content: Int)]? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var streams: [(start: Int, size: Int, content: Int)] = []
        var end = bytes.count
        while end > 0 {
            guard end >= 2 * Int(LZMA_STREAM_HEADER_SIZE) else { return nil }
            var footer = lzma_stream_flags()
            guard lzma_stream_footer_decode(&footer, base + end - Int(LZMA_STREAM_HEADER_SIZE)) == LZMA_OK,
                  footer.backward_size <= UInt64(end - 2 * Int(LZMA_STREAM_HEADER_SIZE)) else { return nil }
            let indexSize = Int(footer.backward_size)
            let indexStart = end - Int(LZMA_STREAM_HEADER_SIZE) - indexSize
            var index: OpaquePointer?
            // An index costs memory by its records: one this large is no
            // file of weir's (a stream per chunk), and is left to the serial path.
            var limit = UInt64(64 << 20)
            var position = 0
            guard lzma_index_buffer_decode(&index, &limit, nil, base + indexStart, &position, indexSize) == LZMA_OK
            else { return nil }
            let size = lzma_index_stream_size(index)
            let content = lzma_index_uncompressed_size(index)
            lzma_index_end(index, nil)
            guard size <= UInt64(end), content <= UInt64(Int.max) else { return nil }
            let start = end - Int(size)
            guard (0..<6).allSatisfy({ bytes[start + $0] == xzHeaderMagic[$0] }) else { return nil }
            streams.append((start, Int(size), Int(content)))
            end = start
        }
        return streams.reversed()
    }

    /// Decodes the .xz stream of `size` bytes that starts `input` into
    /// `output`, which holds its `content` bytes exactly, with liblzma's
    /// one-call decoder under `memoryLimit`: nil when it decodes to exactly
    /// that, or the error (the stream at file offset `offset`).
    package static func decodeXzStream(_ input: UnsafeRawBufferPointer, size: Int,
                                       into output: UnsafeMutableRawPointer, content: Int, memoryLimit: UInt64,
                                       path: String, operation: WeirError.Operation, offset: Int) -> WeirError? {
        var (limit, consumed, produced) = (memoryLimit, 0, 0)
        // No input at all (no address) is a stream cut short: a data error.
        let code = input.baseAddress.map {
            lzma_stream_buffer_decode(
                &limit, 0, nil, $0.assumingMemoryBound(to: UInt8.self), &consumed,
                size, output.assumingMemoryBound(to: UInt8.self), &produced, content)
        } ?? LZMA_DATA_ERROR
        guard code != LZMA_OK || consumed != size || produced != content else { return nil }
        return .lzma(code == LZMA_OK ? LZMA_DATA_ERROR : code, .xz, path: path, operation: operation, offset: offset)
    }

    /// The worker's libdeflate decompressor.
    private func gzipInflater() throws(WeirError) -> OpaquePointer {
        if let gzip { return gzip }
        guard let made = libdeflate_alloc_decompressor() else {
            throw .outOfMemory(path: path, operation: .decompress, creating: "a gzip decoder")
        }
        gzip = made
        return made
    }

    /// The worker's liblz4 decompression context, reset for a new frame.
    private func lz4Decoder() throws(WeirError) -> OpaquePointer {
        if let lz4 {
            LZ4F_resetDecompressionContext(lz4)
            return lz4
        }
        var made: OpaquePointer?
        guard LZ4F_isError(LZ4F_createDecompressionContext(&made, UInt32(LZ4F_VERSION))) == 0, let made else {
            throw .outOfMemory(path: path, operation: .decompress, creating: "an lz4 decoder")
        }
        lz4 = made
        return made
    }
}
