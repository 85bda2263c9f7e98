import FuzzSupport
@testable import Weir
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirSystem

// The decoders of the other formats (gzip by ISA-L and by zlib, xz and
// .lzma by liblzma, lz4 by liblz4, zstd between them) on arbitrary bytes,
// through MixedStreamDecoder, as `weir -d` runs them on a .gz, .xz, .lzma
// or .lz4 file.
//
// Input: one option byte choosing how the stream is cut, then the stream.
// Properties:
// - no crash, no leak, no hang, whatever the bytes;
// - a failure is a WeirError of a kind the command line names (corrupt,
//   truncated, not a known format, a library's refusal);
// - fed in pieces (zlib's gzip) and whole (ISA-L's gzip), a stream that
//   decodes both ways gives the same bytes; fed in pieces, it decodes
//   exactly when fed as one piece through zlib too;
// - the walkers that find weir's own lz4 frames and xz streams without
//   decoding them (the parallel paths) stay inside the bytes given, and
//   the xz streams they find tile the input;
// - with pass-through (`-dcf`), a stream that decodes gives the same bytes,
//   in pieces as whole; what decodes no further is copied, never refused.

/// What one way of decoding gave.
struct Decoded: Equatable {
    var bytes: [UInt8] = []
    var failed = false
}

func decode(_ stream: UnsafeRawBufferPointer, pieces sizes: [Int], whole: Bool, passThrough: Bool = false) -> Decoded {
    let decoder = MixedStreamDecoder(options: DecompressionOptions(passThrough: passThrough).decoding, path: "fuzz",
                                     operation: .decompress, wholeInput: whole)
    var result = Decoded()
    var position = 0
    do throws(WeirError) {
        for size in sizes where position < stream.count {
            let end = min(stream.count, position + size)
            try decoder.feed(UnsafeRawBufferPointer(rebasing: stream[position..<end])) { (block, _) throws(WeirError) in
                result.bytes += block
                // The output of a few KiB of input stays small unless it is a bomb: cut it short.
                if result.bytes.count > 64 << 20 { throw .cancelled(path: "fuzz", operation: .decompress) }
            }
            position = end
        }
        try decoder.finish { (block, _) throws(WeirError) in result.bytes += block }
    } catch {
        let kinds: [WeirError.Kind] = [.corrupt, .truncated, .notZstd, .library, .memoryLimit, .checksumMismatch,
                                       .cancelled]
        require(kinds.contains(error.kind), "unexpected error kind \(error.kind): \(error)")
        result.failed = true
        result.bytes = []
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormats(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let options = OptionBytes(fuzzInput(data, size), count: 1)
    let stream = options.payload
    guard !stream.isEmpty else { return 0 }
    let zlibWhole = decode(stream, pieces: [stream.count], whole: false)
    let zlibPieces = decode(stream, pieces: pieceSizes(option: options[0], count: stream.count), whole: false)
    require(zlibPieces == zlibWhole, "in pieces: failed \(zlibPieces.failed), whole: failed \(zlibWhole.failed)")
    let isal = decode(stream, pieces: [stream.count], whole: true)
    if !isal.failed && !zlibWhole.failed {
        require(isal.bytes == zlibWhole.bytes, "ISA-L and zlib decode to different bytes")
    }
    if let frame = Lz4FrameScan.frame(stream) { require(frame.size <= stream.count, "an lz4 frame beyond the input") }
    if let streams = WholeMemberCodec.xzStreams(stream) {
        var end = 0
        for found in streams {
            require(found.start == end && found.size > 0, "xz streams that do not tile the input")
            end += found.size
        }
        require(end == stream.count, "xz streams that do not end the input")
    }
    let copied = decode(stream, pieces: pieceSizes(option: options[0], count: stream.count), whole: false,
                        passThrough: true)
    if !zlibWhole.failed { require(copied == zlibWhole, "pass-through changes a stream that decodes") }
    let copiedWhole = decode(stream, pieces: [stream.count], whole: false, passThrough: true)
    require(copied == copiedWhole, "pass-through in pieces and whole differ")
    return 0
}
