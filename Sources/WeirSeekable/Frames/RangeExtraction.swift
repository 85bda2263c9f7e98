import Dispatch
import Glibc
import WeirFormats
import WeirPipeline
import WeirSystem

/// `weir -d --range`: byte ranges of a zstd input's decompressed content,
/// written in the order given, through DispatchIO (a ``RangeOutput``), or
/// only decoded (`-t`). A ``Cancellation`` stops it between pieces.
///
/// - A regular file goes through a ``SeekableReader``: the frames are
///   indexed first (seek table, or frame and block headers), every range is
///   checked against the content's size before a byte is written, and only
///   the frames that hold the ranges are read and decoded.
/// - A stream (a pipe) is decoded in one pass: bytes before a range are
///   decoded and dropped, and reading stops after the frame that holds the
///   last range's end. The ranges must be in increasing order; one that ends
///   past the content is an error after the ranges before it were written.
///
/// Verifying checksums (the default), no byte goes out before its frame's
/// check passed: a frame is decoded to its end, the range's end inside it
/// included (issue 59). From a stream, a frame's bytes in the ranges wait
/// for its end, up to ``heldLimit``; past it they go out as they come, as
/// a frame too large for the budget streams when decoding whole.
///
/// An observer, if given, counts the bytes of the ranges as they are
/// served, as taken and as written: a range's progress is that of its bytes.
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

    /// The most bytes of one frame a stream's extraction holds until the
    /// frame's check passed: the seekable reader's largest frame decoded whole.
    static let heldLimit = SeekableReader.cacheableFrameSize

    /// The largest frame of a file of one frame that a range decodes whole:
    /// a larger one (one frame as `zstd FILE` writes it) streams through its
    /// window, the range's bytes held until its check passed, instead of the
    /// whole frame in memory of its size (issue 81).
    static let loneFrameLimit = DecompressionOptions.defaultBudgetPerThread

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
    package static func file(path: String, ranges: [Range], options: DecompressionOptions, output: Descriptor?,
                             cancellation: Cancellation? = nil,
                             observer: ProgressObserver? = nil) throws(WeirError) -> Outcome {
        let reader = try SeekableReader(path: path, options: options,
                                        wholeFrameLimit: SeekableReader.cacheableFrameSize,
                                        loneFrameLimit: loneFrameLimit)
        let resolved = ranges.map { $0.start ..< max($0.start, $0.end ?? reader.count) }
        if let past = resolved.first(where: { $0.upperBound > reader.count }) {
            throw WeirError.outOfRange(path: path, range: past, size: reader.count)
        }
        var outcome = Outcome(frames: reader.frameCount, warnings: reader.warnings)
        let sink = output.map(RangeOutput.init)
        do throws(WeirError) {
            for range in resolved {
                outcome.framesRead += try reader.read(range) { piece throws(WeirError) in
                    if cancellation?.isCancelled == true {
                        throw WeirError.cancelled(path: path, operation: .decompress)
                    }
                    try sink?.write(piece)
                    outcome.bytesOut += piece.count
                    observer?.bytesRead(piece.count)
                    observer?.bytesWritten(piece.count)
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
    package static func stream(input: Descriptor, ranges: [Range], options: DecompressionOptions, output: Descriptor?,
                               cancellation: Cancellation? = nil,
                               observer: ProgressObserver? = nil) throws(WeirError) -> Outcome {
        let inputName = input.path
        let context = try DecompressionContext(
            windowLogMax: options.windowLimit.logMax, verifyChecksum: options.verifyChecksum,
            dictionary: try options.dictionary.map { d throws(WeirError) in try DecompressionDictionary(d) },
            prefix: options.patchReference, path: inputName)
        let sink = output.map(RangeOutput.init)
        var outcome = Outcome()
        var decoder = FrameDecoder(context: context, path: inputName, followsFrames: true)
        var current = 0  // the range being served
        var held = HeldBytes(sink: sink, holds: options.verifyChecksum)
        var compressed = [UInt8](repeating: 0, count: FrameDecoder.pieceSize)
        let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: FrameDecoder.pieceSize, alignment: 64)
        defer { decoded.deallocate() }
        var scratch = ScratchOutput(space: decoded)
        // The frame being decoded: its index and where it starts in the stream, for errors.
        var frame = (index: 0, offset: 0)
        do throws(WeirError) {
            // Past the last range, the frame that holds its end is decoded to its end.
            reading: while current < ranges.count || held.frameServed {
                let got = try compressed.withUnsafeMutableBytes { bytes in
                    Result { () throws(WeirError) in try input.readSome(into: bytes) }
                }.get()
                if got == 0 { break }
                if cancellation?.isCancelled == true {
                    throw WeirError.cancelled(path: inputName, operation: .decompress)
                }
                outcome.bytesIn += got
                var used = 0
                while true {
                    var start = decoder.produced
                    let step = try compressed.withUnsafeBytes { all in
                        Result { () throws(WeirError) in
                            try decoder.decodeMember(UnsafeRawBufferPointer(rebasing: all[0 ..< got]), consumed: &used,
                                                     into: &scratch) { piece throws(WeirError) in
                                let served = outcome.bytesOut
                                try serve(piece, at: start, ranges: ranges, current: &current, held: &held,
                                          outcome: &outcome)
                                observer?.bytesRead(outcome.bytesOut - served)
                                observer?.bytesWritten(outcome.bytesOut - served)
                                start += piece.count
                                return current < ranges.count || held.frameServed
                            }
                        }
                    }.mapError { DecodeSession.located($0, index: frame.index, offset: frame.offset) }.get()
                    if step == .ended {
                        try held.frameEnded()
                        frame = (frame.index + 1, outcome.bytesIn - got + used)
                    }
                    if current >= ranges.count, !held.frameServed { break reading }
                    if step != .ended || used == got { break }
                }
            }
            if current < ranges.count || held.frameServed {
                // The content ended: inside a frame, or before a range.
                if outcome.bytesIn > 0 { try decoder.finish(inputEndsAt: outcome.bytesIn) }
                let produced = decoder.produced
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

    /// Hands `held` what of `piece`, the content from offset `start`, falls
    /// in the ranges from `current` on, moving `current` past each that ends.
    private static func serve(_ piece: UnsafeRawBufferPointer, at start: Int, ranges: [Range], current: inout Int,
                              held: inout HeldBytes, outcome: inout Outcome) throws(WeirError) {
        var from = start
        let to = start + piece.count
        while current < ranges.count {
            let range = ranges[current]
            let end = range.end ?? Int.max
            let first = max(from, range.start), stop = min(to, end)
            if first < stop {
                try held.add(UnsafeRawBufferPointer(rebasing: piece[(first - start) ..< (stop - start)]))
                outcome.bytesOut += stop - first
            }
            guard to >= end else { break }
            current += 1
            from = max(from, end)
        }
    }

    /// The bytes of the ranges in the frame being decoded from a stream,
    /// held until the frame ends, its check passed (when `holds`), then
    /// written; past ``heldLimit``, written as they come.
    private struct HeldBytes {
        let sink: RangeOutput?
        let holds: Bool
        private var bytes: [UInt8] = []
        /// Whether bytes of the frame being decoded were served (the frame
        /// must then be decoded to its end, when `holds`).
        private(set) var frameServed = false

        init(sink: RangeOutput?, holds: Bool) {
            self.sink = sink
            self.holds = holds
        }

        mutating func add(_ piece: UnsafeRawBufferPointer) throws(WeirError) {
            guard holds else { return try sink?.write(piece) ?? () }
            frameServed = true
            guard let sink else { return }
            if bytes.count + piece.count > RangeExtraction.heldLimit {
                try write(to: sink)
                try sink.write(piece)
            } else {
                bytes.append(contentsOf: piece)
            }
        }

        /// The frame ended, its checksum verified: its bytes go out.
        mutating func frameEnded() throws(WeirError) {
            frameServed = false
            if let sink { try write(to: sink) }
        }

        private mutating func write(to sink: RangeOutput) throws(WeirError) {
            var from = 0
            while from < bytes.count {
                let to = min(bytes.count, from + FrameDecoder.pieceSize)
                try bytes.withUnsafeBytes { all in
                    Result { () throws(WeirError) in
                        try sink.write(UnsafeRawBufferPointer(rebasing: all[from ..< to]))
                    }
                }.get()
                from = to
            }
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
