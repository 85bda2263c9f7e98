import Dispatch
import WeirFormats
import WeirPipeline
import WeirSystem

/// The content sizes of zstd frames that do not declare theirs (pzstd's
/// frames, `zstd --no-content-size`), learnt the only way there is: by
/// decoding them, in parallel, and counting what comes out (the content
/// itself is thrown away).
///
/// Each worker owns one libzstd context and two buffers, one for a frame's
/// compressed bytes and one for its content, made for the first frame it
/// takes and reused (grown, never shrunk) for the frames after: the
/// engine's ``WorkerPool`` holds one per running worker, as the pipelines'
/// pools hold their contexts, and hands the frames out in order, one at a
/// time, to whichever worker is free. How a frame is decoded:
/// - A frame of at most `wholeFrameLimit` compressed bytes is read whole
///   (one `pread`) and walked by a ``FrameScanner``, which checks that the
///   bytes are that one zstd frame and gives its header and the most content
///   its blocks can hold (``FrameBoundary/contentBound``). When that bound
///   is at most `wholeFrameLimit` too, the frame is decoded in one pass
///   (`ZSTD_decompressDCtx`) into the content buffer, sized to the bound: no
///   window buffer, no copy, no 1 MiB round trips. pzstd's frames (8 MiB of
///   content) all go this way.
/// - A frame whose bound is larger is streamed from those bytes through
///   `ZSTD_decompressStream`, into the content buffer (1 MiB at least) over
///   and over; a frame of more compressed bytes is also read 1 MiB at a time
///   (and scanned as it is read).
///
/// Either way the frame's window is checked against the options' limit
/// before any of it is decoded (``WindowLimit``: `ZSTD_decompressDCtx` never
/// checks it), and its checksum is verified unless the options say not to.
///
/// Memory: workers × (largest compressed frame + largest bound), where a
/// term above `wholeFrameLimit` (64 MiB by default) counts as 1 MiB, the
/// piece it is streamed through: at most 2 × 64 MiB per worker; plus, for
/// each worker streaming a frame, that frame's window (up to the window
/// limit), which libzstd keeps. For pzstd's files, 8 MiB and a compressed
/// frame (1–3 MiB) per worker. The workers are the options' decoding
/// threads (`-T`, one per core by default), and no more than the frames.
///
/// Errors: the one that decoding the frames one after the other would meet
/// first. A frame that fails stops the workers from decoding any later one
/// (queued jobs after it return at once), and every earlier one has been
/// taken, so all of those finish first. The
/// error names the frame as the file numbers it (``FrameListing/Frame/index``: skippable
/// frames count, as `weir -l` and the frame scanner number them) and its
/// offset.
package enum FrameMeasure {
    /// The content size of each of `frames`, in their order.
    ///
    /// - Parameters:
    ///   - frames: zstd frames of `file`, in file order (any order works;
    ///     the first error is the first in this order).
    ///   - file: the file; errors name it as it names itself.
    ///   - options: the checksum check, the window limit, the number of
    ///     workers, the dictionary.
    ///   - dictionary: `options.dictionary` already digested, to share it;
    ///     when nil, it is digested here (if the options have one).
    ///   - wholeFrameLimit: the largest frame, compressed and decoded, that
    ///     is decoded whole rather than streamed (a worker's buffers).
    /// - Throws: `WeirError` naming the frame and its offset: `.truncated`
    ///   when the file ends inside it; `.corrupt`, `.checksumMismatch` for
    ///   bad data (or bytes that are not the frame, when the file changed
    ///   since it was listed); `.memoryLimit` for a window above the limit;
    ///   `.system` when a read fails; `.library` when libzstd cannot be used.
    static func contentSizes(of frames: [FrameListing.Frame], in file: Descriptor, options: DecompressionOptions,
                             dictionary: DecompressionDictionary? = nil,
                             wholeFrameLimit: Int = SeekableReader.cacheableFrameSize) throws(WeirError) -> [Int] {
        guard !frames.isEmpty else { return [] }
        var digested = dictionary
        if digested == nil, let given = options.dictionary { digested = try DecompressionDictionary(given) }
        let shared = digested
        let progress = Locked(Progress(count: frames.count))
        // The engine's worker pool, as the pipelines': one Worker (context
        // and buffers) per running drain loop, the frames queued in order.
        let pool = WorkerPool<Worker>(
            width: min(frames.count, max(1, options.resolvedThreads)), label: "weir.measure",
            makeContext: { Worker(file: file, options: options, dictionary: shared, wholeFrameLimit: wholeFrameLimit) },
            // Making a Worker cannot fail: its libzstd context is made for
            // its first frame, so that a failure there fails that frame.
            onContextFailure: { _ in })
        let jobs = DispatchGroup()
        for index in frames.indices {
            jobs.enter()
            pool.submit { worker in
                defer { jobs.leave() }
                // None after a frame that failed is taken (all before it were).
                guard let worker, progress.withLock({ index < $0.failure?.index ?? Int.max }) else { return }
                do throws(WeirError) {
                    let size = try worker.measure(frames[index])
                    progress.withLock { $0.sizes[index] = size }
                } catch {
                    progress.withLock { $0.fail(index, error) }
                }
            }
        }
        jobs.wait()
        let outcome = progress.current
        if let failure = outcome.failure { throw failure.error }
        return outcome.sizes
    }

    /// What the workers share: the sizes found, the earliest failure.
    private struct Progress: Sendable {
        /// The frames' sizes, as they are found.
        var sizes: [Int]
        /// The first frame in order known to have failed, and its error.
        var failure: (index: Int, error: WeirError)?

        init(count: Int) { sizes = [Int](repeating: 0, count: count) }

        /// Records that frame `index` failed with `error`, unless an earlier
        /// frame already did.
        mutating func fail(_ index: Int, _ error: WeirError) {
            if let failure, failure.index < index { return }
            failure = (index, error)
        }
    }

    /// One worker's decoder and buffers, used on its thread only.
    private final class Worker {
        private let file: Descriptor
        private let options: DecompressionOptions
        private let dictionary: DecompressionDictionary?
        private let wholeFrameLimit: Int
        /// Made for the first frame (so that failing to make it fails that frame).
        private var context: DecompressionContext?
        /// A frame's compressed bytes, or a piece of them.
        private var input = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        /// A frame's content, or a piece of it.
        private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)

        init(file: Descriptor, options: DecompressionOptions, dictionary: DecompressionDictionary?,
             wholeFrameLimit: Int) {
            self.file = file
            self.options = options
            self.dictionary = dictionary
            self.wholeFrameLimit = wholeFrameLimit
        }

        deinit {
            input.deallocate()
            output.deallocate()
        }

        /// The content size of `frame`; an error names the frame.
        func measure(_ frame: FrameListing.Frame) throws(WeirError) -> Int {
            do throws(WeirError) {
                let context: DecompressionContext
                if let made = self.context {
                    context = made
                } else {
                    context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                                       verifyChecksum: options.verifyChecksum, dictionary: dictionary,
                                                       prefix: options.patchReference, path: file.path)
                    self.context = context
                }
                if frame.compressedSize <= wholeFrameLimit {
                    return try measureWhole(frame, context)
                }
                return try measurePieces(frame, context)
            } catch {
                throw DecodeSession.located(error, index: frame.index, offset: frame.offset)
            }
        }

        /// A frame read whole: decoded in one pass when its bound allows,
        /// else streamed from the bytes read.
        private func measureWhole(_ frame: FrameListing.Frame, _ context: DecompressionContext) throws(WeirError) -> Int
        {
            let bytes = Self.grown(&input, to: frame.compressedSize)
            let got = try file.read(into: bytes, at: frame.offset, operation: .read)
            guard got == frame.compressedSize else {
                throw FrameDecoder.truncation(path: file.path, at: frame.offset + got)
            }
            let source = UnsafeRawBufferPointer(bytes)
            var scanner = FrameScanner(path: file.path, operation: .decompress)
            let found: [FrameBoundary]
            do throws(WeirError) {
                found = try scanner.feed(source)
                try scanner.finish()
            } catch {
                throw notTheFrame(frame, cause: error)
            }
            guard found.count == 1, let boundary = found.first, !boundary.header.isSkippable else {
                throw notTheFrame(frame, cause: nil)
            }
            try options.windowLimit.check(boundary.header, index: frame.index, offset: frame.offset, path: file.path)
            if boundary.contentBound <= wholeFrameLimit {
                // An empty bound still gets a byte: a buffer without an address is not one libzstd takes.
                let content = Self.grown(&output, to: max(1, boundary.contentBound))
                return try context.decompressFrame(source, into: content)
            }
            context.reset()
            var decoder = FrameDecoder(context: context, path: file.path)
            var scratch = scratchOutput()
            try decoder.decode(source, into: &scratch)
            try decoder.checkEnded()
            try checkDeclared(frame, boundary.header, produced: decoder.produced)
            return decoder.produced
        }

        /// A frame too large to read whole: read, scanned and streamed a
        /// piece at a time.
        private func measurePieces(
            _ frame: FrameListing.Frame, _ context: DecompressionContext
        ) throws(WeirError) -> Int {
            context.reset()
            let buffer = Self.grown(&input, to: FrameDecoder.pieceSize)
            var scanner = FrameScanner(path: file.path, operation: .decompress)
            var header: FrameHeader?
            var found: [FrameBoundary] = []
            var decoder = FrameDecoder(context: context, path: file.path)
            var scratch = scratchOutput()
            try decoder.decodeFrame(in: file, at: frame.offset, compressedSize: frame.compressedSize, buffer: buffer,
                                    into: &scratch, onRead: { piece throws(WeirError) in
                do throws(WeirError) {
                    found += try scanner.feed(piece)
                } catch {
                    throw notTheFrame(frame, cause: error)
                }
                if header == nil {
                    // The first piece holds the header (or the whole frame), which is at most 18 bytes.
                    guard let known = scanner.currentHeader ?? found.first?.header, !known.isSkippable else {
                        throw notTheFrame(frame, cause: nil)
                    }
                    try options.windowLimit.check(known, index: frame.index, offset: frame.offset, path: file.path)
                    header = known
                }
                // A frame that ends before its bytes do: they are not that one frame.
                if found.contains(where: { $0.compressedSize != frame.compressedSize }) {
                    throw notTheFrame(frame, cause: nil)
                }
            })
            do throws(WeirError) {
                try scanner.finish()
            } catch {
                throw notTheFrame(frame, cause: error)
            }
            guard found.count == 1, let header else { throw notTheFrame(frame, cause: nil) }
            try checkDeclared(frame, header, produced: decoder.produced)
            return decoder.produced
        }

        /// The content buffer as a decoder's scratch output (at least 1 MiB).
        private func scratchOutput() -> ScratchOutput {
            ScratchOutput(space: Self.grown(&output, to: max(output.count, FrameDecoder.pieceSize)))
        }

        /// Throws unless a streamed frame gave the content its header
        /// declares, if it declares any (the check `ZSTD_decompressDCtx`
        /// makes, which streaming skips when the last block is empty).
        private func checkDeclared(_ frame: FrameListing.Frame, _ header: FrameHeader, produced: Int) throws(WeirError)
        {
            if let declared = header.contentSize, declared != UInt64(produced) {
                throw WeirError.corrupt(path: file.path, operation: .decompress,
                                        "declares \(declared) bytes of content but decodes to \(produced)",
                                        frame: frame.index, offset: frame.offset)
            }
        }

        /// The bytes at `frame` are not one zstd frame of its size: the file
        /// changed since it was listed. `cause` is the scanner's error, whose
        /// offsets count from the frame's first byte.
        private func notTheFrame(_ frame: FrameListing.Frame, cause: WeirError?) -> WeirError {
            var error = WeirError.corrupt(path: file.path, operation: .decompress,
                                          "is not one zstd frame of \(frame.compressedSize) bytes",
                                          frame: frame.index, offset: frame.offset)
            error.cause = cause
            return error
        }

        /// The first `count` bytes of `buffer`, which is replaced by a larger
        /// one first if it is shorter (its bytes are not kept).
        private static func grown(_ buffer: inout UnsafeMutableRawBufferPointer,
                                  to count: Int) -> UnsafeMutableRawBufferPointer {
            if buffer.count < count {
                buffer.deallocate()
                buffer = .allocate(byteCount: count, alignment: 64)
            }
            return UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count])
        }
    }
}
