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
/// left to ``OtherFormatStream``'s serial decoder.
///
/// Bound and threads: ``WholeMemberDecoder``'s; a file with a stream above
/// its `frameLimit` is left to the serial decoder. Each decoder's memory is
/// limited as the serial one's (``LzmaMemberDecoder/memoryLimit(_:)``).
struct XzStreamScan {
    /// The run's parallel decoding of members, with its session and workers.
    let members: WholeMemberDecoder
    let operation: WeirError.Operation

    /// Queues every stream of `region` (the whole file) when it is made of
    /// two or more .xz streams; returns the bytes they take and the next
    /// output number in `sequence` (zero bytes otherwise).
    func decode(_ data: DispatchData, region: UnsafeRawBufferPointer,
                sequence: inout Int) throws(WeirError) -> Int {
        guard members.isParallel, region.count >= 6,
              (0..<6).allSatisfy({ region[$0] == WholeMemberCodec.xzHeaderMagic[$0] }),
              let streams = WholeMemberCodec.xzStreams(region), streams.count > 1,
              streams.allSatisfy({ $0.content <= members.frameLimit }) else { return 0 }
        let (path, operation) = (members.path, self.operation)
        let memoryLimit = LzmaMemberDecoder.memoryLimit(members.session.options.windowLimit)
        // liblzma's one-call decoder makes its own state: the worker holds none.
        return try members.decode(
            streams, in: data, region: region, sequence: &sequence
        ) { _, rest, stream, output in
            WholeMemberCodec.decodeXzStream(
                rest, size: stream.size, into: output, content: stream.content, memoryLimit: memoryLimit,
                path: path, operation: operation, offset: stream.start
            ).map { .failed($0) } ?? .confirmed
        }
    }
}
