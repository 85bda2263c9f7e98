import CFormats
import Dispatch
import WeirFormats
import WeirSystem

/// Decodes a whole mapped file made only of .xz streams, two or more, in
/// parallel: weir writes one stream per chunk. A stream's end is only known
/// from its footer, so the streams are found from the file's end backwards:
/// each footer gives its index's size, the index the stream's whole size
/// and content size (liblzma's own parsers, nothing decoded). Each stream is
/// then decoded whole by liblzma's one-call decoder on a worker, into a
/// buffer of exactly its content size. A stock single-stream .xz, a file
/// with anything else in it (stream padding, another format) and a pipe are
/// left to ``OtherFormatTail``'s serial decoder.
///
/// Bound and threads: ``WholeMemberDecoder``'s; a file with a stream above
/// its `frameLimit` is left to the serial decoder. Each decoder's memory is
/// limited as the serial one's (``LzmaMemberDecoder/memoryLimit(_:)``).
struct XzStreamScan {
    /// The run's parallel decoding of members, with its session and workers.
    let members: WholeMemberDecoder
    let operation: WeirError.Operation

    static let headerMagic: [UInt8] = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]

    /// The streams that make up `bytes` exactly, in order; nil when it is
    /// not made of .xz streams alone.
    static func streams(_ bytes: UnsafeRawBufferPointer) -> [WholeMemberDecoder.Member]? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var streams: [WholeMemberDecoder.Member] = []
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
            guard (0..<6).allSatisfy({ bytes[start + $0] == headerMagic[$0] }) else { return nil }
            streams.append((start, Int(size), Int(content)))
            end = start
        }
        return streams.reversed()
    }

    /// Queues every stream of `region` (the whole file) when it is made of
    /// two or more .xz streams; returns the bytes they take and the next
    /// output number in `sequence` (zero bytes otherwise).
    func decode(_ data: DispatchData, region: UnsafeRawBufferPointer,
                sequence: inout Int) throws(WeirError) -> Int {
        guard members.isParallel, region.count >= 6, (0..<6).allSatisfy({ region[$0] == Self.headerMagic[$0] }),
              let streams = Self.streams(region), streams.count > 1,
              streams.allSatisfy({ $0.content <= members.frameLimit }) else { return 0 }
        let (path, operation) = (members.path, self.operation)
        let memoryLimit = LzmaMemberDecoder.memoryLimit(members.session.options.windowLimit)
        // liblzma's one-call decoder makes its own state: the worker holds none.
        return try members.decode(
            streams, in: data, region: region, sequence: &sequence
        ) { _, rest, stream, output in
            var (limit, consumed, produced) = (memoryLimit, 0, 0)
            // No input at all (no address) is a stream cut short: a data error.
            let code = rest.baseAddress.map {
                lzma_stream_buffer_decode(
                    &limit, 0, nil, $0.assumingMemoryBound(to: UInt8.self), &consumed,
                    stream.size, output.assumingMemoryBound(to: UInt8.self), &produced,
                    stream.content)
            } ?? LZMA_DATA_ERROR
            guard code != LZMA_OK || consumed != stream.size || produced != stream.content else { return .confirmed }
            return .failed(.lzma(code == LZMA_OK ? LZMA_DATA_ERROR : code, .xz, path: path, operation: operation,
                                 offset: stream.start))
        }
    }
}
