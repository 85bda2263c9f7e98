import Dispatch
import Glibc
import SystemPackage

/// `weir -d --range`: byte ranges of a zstd input's decompressed content,
/// written in the order given, through DispatchIO (a ``RangeOutput``), or
/// only decoded (`-t`). A ``Cancellation`` stops it between pieces.
///
/// - A regular file goes through a ``SeekableReader``: the frames are
///   indexed first (seek table, or frame and block headers), every range is
///   checked against the content's size before a byte is written, and only
///   the frames that hold the ranges are read and decoded.
/// - A stream (a pipe) is decoded in one pass: bytes before a range are
///   decoded and dropped, and reading stops after the last range. The ranges
///   must be in increasing order; one that ends past the content is an error
///   after the ranges before it were written.
package enum RangeExtraction {
    /// A range as given: an `end` of nil is the end of the content.
    package struct Range: Sendable, Equatable {
        package var start: Int
        package var end: Int?

        package init(start: Int, end: Int?) {
            self.start = start
            self.end = end
        }
    }

    /// What an extraction did.
    package struct Outcome: Sendable, Equatable {
        /// Bytes of content written (or, testing, decoded for the ranges).
        package var bytesOut = 0
        /// Compressed bytes read: a file's frames that were decoded, or the stream up to the end of the last range.
        package var bytesIn = 0
        /// Frames decoded for the ranges (a frame counts once per range).
        package var framesRead = 0
        /// The frames of the file (nil for a stream).
        package var frames: Int?
        /// Things the user should know (a seek table ignored).
        package var warnings: [String] = []
    }

    /// The ranges of the file at `path` to `output` (nil: decode only).
    package static func file(path: String, ranges: [Range], options: DecompressionOptions, output: Int32?,
                             outputName: String, cancellation: Cancellation? = nil) throws(WeirError) -> Outcome {
        let reader = try SeekableReader(path: path, options: options)
        let resolved = ranges.map { $0.start ..< max($0.start, $0.end ?? reader.count) }
        if let past = resolved.first(where: { $0.upperBound > reader.count }) {
            throw WeirError.outOfRange(path: path, range: past, size: reader.count)
        }
        var outcome = Outcome(frames: reader.frameCount, warnings: reader.warnings)
        let sink = output.map { RangeOutput(fd: $0, path: outputName) }
        do throws(WeirError) {
            for range in resolved {
                outcome.framesRead += try reader.read(range) { piece throws(WeirError) in
                    if cancellation?.isCancelled == true { throw WeirError.cancelled(path: path, operation: .decompress) }
                    try sink?.write(piece)
                    outcome.bytesOut += piece.count
                }
            }
            try sink?.finish()
        } catch {
            sink?.stop(error)
            throw error
        }
        outcome.bytesIn = reader.compressedBytes(touching: resolved)
        return outcome
    }

    /// The ranges of the stream `input` to `output` (nil: decode only), in
    /// one pass; `ranges` must be in increasing order.
    package static func stream(input: Int32, inputName: String, ranges: [Range], options: DecompressionOptions,
                               output: Int32?, outputName: String,
                               cancellation: Cancellation? = nil) throws(WeirError) -> Outcome {
        let context = try DecompressionContext(
            windowLogMax: options.windowLimit.logMax, verifyChecksum: options.verifyChecksum,
            dictionary: try options.dictionary.map { d throws(WeirError) in try DecompressionDictionary(d) },
            path: inputName)
        let sink = output.map { RangeOutput(fd: $0, path: outputName) }
        var outcome = Outcome()
        var produced = 0
        var current = 0  // the range being served
        var hint = 1
        var compressed = [UInt8](repeating: 0, count: 1 << 20)
        var decoded = [UInt8](repeating: 0, count: 1 << 20)
        let source = FileDescriptor(rawValue: input)
        do throws(WeirError) {
            reading: while current < ranges.count {
                let got: Int
                do {
                    got = try compressed.withUnsafeMutableBytes { try source.read(into: $0, retryOnInterrupt: true) }
                } catch {
                    throw WeirError.system((error as? Errno)?.rawValue ?? EIO, path: inputName, operation: .read)
                }
                if got == 0 { break }
                if cancellation?.isCancelled == true {
                    throw WeirError.cancelled(path: inputName, operation: .decompress)
                }
                outcome.bytesIn += got
                var consumed = 0
                var filled = 0
                repeat {
                    filled = 0
                    hint = try compressed.withUnsafeBytes { all in
                        decoded.withUnsafeMutableBytes { destination in
                            Result { () throws(WeirError) in
                                try context.decompressStream(UnsafeRawBufferPointer(rebasing: all[0 ..< got]),
                                                             consumed: &consumed, into: destination, filled: &filled)
                            }
                        }
                    }.get()
                    // Hand over what falls in the ranges, moving on as each ends.
                    var from = produced
                    let to = produced + filled
                    while current < ranges.count {
                        let range = ranges[current]
                        let end = range.end ?? Int.max
                        let start = max(from, range.start), stop = min(to, end)
                        if start < stop {
                            let slice = (start - produced) ..< (stop - produced)
                            try decoded.withUnsafeBytes { all in
                                Result { () throws(WeirError) in
                                    try sink?.write(UnsafeRawBufferPointer(rebasing: all[slice]))
                                }
                            }.get()
                            outcome.bytesOut += stop - start
                        }
                        guard to >= end else { break }
                        current += 1
                        from = max(from, end)
                    }
                    produced = to
                    if current == ranges.count { break reading }
                } while consumed < got || filled == decoded.count
            }
            if current < ranges.count {
                // The content ended: inside a frame, or before a range.
                if hint != 0 && outcome.bytesIn > 0 {
                    throw WeirError.truncated(path: inputName, operation: .decompress, "the input ends inside a frame")
                }
                while current < ranges.count, ranges[current].end == nil, ranges[current].start <= produced {
                    current += 1
                }
                if current < ranges.count {
                    let range = ranges[current]
                    throw WeirError.outOfRange(path: inputName, range: range.start ..< (range.end ?? range.start),
                                               size: produced)
                }
            }
            try sink?.finish()
        } catch {
            sink?.stop(error)
            throw error
        }
        return outcome
    }
}
