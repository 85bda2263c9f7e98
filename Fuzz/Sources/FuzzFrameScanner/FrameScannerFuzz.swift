import Dispatch
import FuzzSupport
@testable import Weir
@testable import WeirFormats
@testable import WeirSystem

// The frame scanner on arbitrary bytes in arbitrary pieces.
//
// Input: one option byte choosing how the stream is cut (the seed and the
// kind of piece sizes), then the stream. Properties:
// - the stream scanned whole, in pieces, and as one DispatchData of many
//   regions gives the same frames and the same error (a scanner's result
//   does not depend on where reads end);
// - frames tile the stream from offset 0, numbered from 0, each at least
//   a skippable frame's 8 bytes; a spent scanner throws its error again;
// - never more than `maxBufferedBytes` kept between pieces;
// - every frame found is one libzstd sizes the same
//   (`ZSTD_findFrameCompressedSize`), except a window libzstd refuses to
//   parse (windowLog above 31), which the scanner does not judge.

/// What one way of scanning found.
struct Scan: Equatable {
    var frames: [FrameBoundary] = []
    var error: WeirError?
    var frameCount = 0
}

/// Scans `stream` cut at `sizes` (pieces of those sizes, the last one
/// taking what is left), checking the invariants after every piece.
func scan(_ stream: UnsafeRawBufferPointer, pieces sizes: [Int]) -> Scan {
    var scanner = FrameScanner(path: "fuzz")
    var result = Scan()
    var position = 0
    var index = 0
    while position < stream.count || index == 0 {
        let size = index < sizes.count ? sizes[index] : stream.count - position
        index += 1
        let end = min(stream.count, position + max(1, size))
        let piece = UnsafeRawBufferPointer(rebasing: stream[position ..< end])
        do throws(WeirError) {
            let found = try scanner.feed(piece)
            checkFrames(found, after: result.frames, scanner: scanner)
            result.frames += found
            require(scanner.offset == end, "offset \(scanner.offset) after feeding up to \(end)")
        } catch {
            expectSpent(&scanner, error)
            result.error = error
            result.frameCount = scanner.frameCount
            return result
        }
        require(scanner.bufferedByteCount <= FrameScanner.maxBufferedBytes,
                "\(scanner.bufferedByteCount) bytes buffered between pieces")
        position = end
        if stream.isEmpty { break }
    }
    do throws(WeirError) {
        try scanner.finish()
        require(scanner.currentFrameStart == nil, "finish() passed inside a frame")
    } catch {
        require(error.kind == .truncated, "finish() threw \(error.kind), not .truncated")
        require(scanner.currentFrameStart != nil, "truncated, but no frame in progress")
        expectSpent(&scanner, error)
        result.error = error
    }
    result.frameCount = scanner.frameCount
    return result
}

/// Scans `stream` as one DispatchData whose regions are the first 64
/// pieces and the rest (each append copies the region list: more would
/// make this O(n²) and slow every execution).
func scanAsRegions(_ stream: UnsafeRawBufferPointer, pieces sizes: [Int]) -> Scan {
    var data = DispatchData.empty
    var position = 0
    for size in sizes.prefix(64) where position < stream.count {
        let end = min(stream.count, position + max(1, size))
        data.append(DispatchData(bytes: UnsafeRawBufferPointer(rebasing: stream[position ..< end])))
        position = end
    }
    if position < stream.count {
        data.append(DispatchData(bytes: UnsafeRawBufferPointer(rebasing: stream[position...])))
    }
    var scanner = FrameScanner(path: "fuzz")
    var result = Scan()
    do throws(WeirError) {
        result.frames = try scanner.feed(data)
        checkFrames(result.frames, after: [], scanner: scanner)
        try scanner.finish()
    } catch {
        expectSpent(&scanner, error)
        result.error = error
    }
    result.frameCount = scanner.frameCount
    return result
}

/// Frames just found continue those found before: contiguous, numbered in order.
func checkFrames(_ found: [FrameBoundary], after earlier: [FrameBoundary], scanner: FrameScanner) {
    var expectedOffset = earlier.last?.end ?? 0
    var expectedIndex = earlier.count
    for frame in found {
        require(frame.index == expectedIndex, "frame index \(frame.index), expected \(expectedIndex)")
        require(frame.offset == expectedOffset, "frame \(frame.index) at \(frame.offset), expected \(expectedOffset)")
        require(frame.compressedSize >= 8, "frame \(frame.index) of \(frame.compressedSize) bytes")
        require(frame.end <= scanner.offset, "frame \(frame.index) ends past the bytes fed")
        switch frame.header.kind {
        case .zstd:
            require(frame.blockCount >= 1, "zstd frame \(frame.index) without a block")
            require((frame.contentChecksum != nil) == frame.header.hasChecksum, "checksum presence")
            require(frame.skippableValue == nil, "zstd frame with a skippable value")
        case .skippable:
            require(frame.contentChecksum == nil && frame.blockCount == 0, "skippable frame with blocks")
            require((frame.skippableValue != nil) == (frame.compressedSize == 12), "skippable value presence")
        }
        expectedOffset = frame.end
        expectedIndex += 1
    }
    if let start = scanner.currentFrameStart {
        require(start == expectedOffset, "frame in progress at \(start), expected \(expectedOffset)")
    } else {
        require(scanner.offset == expectedOffset, "between frames at \(scanner.offset), last end \(expectedOffset)")
        require(scanner.currentHeader == nil, "a header without a frame in progress")
    }
}

/// A scanner that threw keeps throwing the same error.
func expectSpent(_ scanner: inout FrameScanner, _ error: WeirError) {
    var again: WeirError?
    do throws(WeirError) { _ = try scanner.feed(UnsafeRawBufferPointer(start: nil, count: 0)) } catch { again = error }
    require(again == error, "a spent scanner threw \(String(describing: again)), not \(error)")
    again = nil
    do throws(WeirError) { try scanner.finish() } catch { again = error }
    require(again == error, "a spent scanner's finish() threw \(String(describing: again)), not \(error)")
}


@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameScanner(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let options = OptionBytes(fuzzInput(data, size), count: 1)
    let stream = options.payload
    let whole = scan(stream, pieces: [stream.count])
    let sizes = pieceSizes(option: options[0], count: stream.count)
    let pieced = scan(stream, pieces: sizes)
    let regions = scanAsRegions(stream, pieces: sizes)

    require(regions == whole, "as regions: \(regions), whole: \(whole)")
    require(pieced.error == whole.error, "in pieces: \(String(describing: pieced.error)), whole: \(String(describing: whole.error))")
    require(pieced.frameCount == whole.frameCount, "in pieces \(pieced.frameCount) frames, whole \(whole.frameCount)")
    // A feed that throws returns none of its frames: the whole stream's are a prefix of the pieces'.
    require(Array(pieced.frames.prefix(whole.frames.count)) == whole.frames, "frames differ in pieces")
    if whole.error == nil {
        require(pieced.frames == whole.frames, "frames differ in pieces")
    }

    for frame in pieced.frames {
        if case .zstd = frame.header.kind, !frame.header.isSingleSegment, frame.header.windowSize >= 1 << 32 {
            continue  // windowLog above 31: libzstd does not parse the header
        }
        let bytes = UnsafeRawBufferPointer(rebasing: stream[frame.offset...])
        let reference = ReferenceDecoder.frameSize(bytes)
        require(reference == frame.compressedSize,
                "frame \(frame.index) at \(frame.offset): \(frame.compressedSize) bytes, libzstd says \(String(describing: reference))")
    }
    return 0
}
