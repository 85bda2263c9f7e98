import WeirFormats
import WeirPipeline
import WeirSystem

/// How a frame's content comes out of the file: decoded whole and kept in
/// the reader's cache, decoded whole for a caller that keeps it, or
/// streamed through a window for a range of it; each checked against its
/// entry before a byte of it goes out (SeekableReader, issue 59).
extension SeekableReader {
    /// Frame `index` decoded whole, from the cache or decoded now (outside
    /// the lock: other reads go on meanwhile) and then kept.
    func decodedWhole(_ index: Int) throws(WeirError) -> [UInt8] {
        if let kept = cache.withLock({ cache in cache.frames.first(where: { $0.index == index })?.bytes }) {
            return kept
        }
        let bytes = try decodeFrame(index)
        cache.withLock { cache in
            cache.frames.removeAll { $0.index == index }
            cache.frames.append((index, bytes))
            if cache.frames.count > Self.cachedFrames { cache.frames.removeFirst() }
        }
        return bytes
    }

    /// Frame `index` decoded whole, not kept: exactly the size its index
    /// lists, its checksum verified (unless the options turn the check
    /// off), as every read checks it. A caller that keeps frames (the
    /// mount's ``FrameCache``) holds only bytes that passed.
    ///
    /// - Throws: `WeirError` `.corrupt`, `.checksumMismatch`, `.truncated`,
    ///   or an index mismatch, naming the frame and its offset.
    package func decodeFrame(_ index: Int) throws(WeirError) -> [UInt8] {
        let frame = frames[index]
        let source = try file.read(count: frame.compressedSize, at: frame.offset, operation: .read)
        guard source.count == frame.compressedSize else {
            throw DecodeSession.located(FrameDecoder.truncation(path: path, at: frame.offset + source.count),
                                        index: frame.index, offset: frame.offset)
        }
        let size = contentStarts[index + 1] - contentStarts[index]
        let header = try source.withUnsafeBytes { bytes in
            Result { () throws(WeirError) in try checkHeader(of: frame, listed: size, head: bytes) }
        }.get()
        let context = try DecompressionContext(windowLogMax: 31, verifyChecksum: options.verifyChecksum,
                                               dictionary: dictionary, prefix: options.patchReference, path: path)
        // Exactly the listed size: a frame with more content fails to fit. Not zeroed first, its pages made at
        // once, huge where they fit: libzstd writes every byte it reports, and only those are kept.
        var outcome: Result<Int, WeirError> = .success(0)
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { output, initialized in
            if let base = output.baseAddress {
                Page.preferHuge(UnsafeMutableRawPointer(base), size)
                Page.populate(UnsafeMutableRawPointer(base), size)
            }
            outcome = source.withUnsafeBytes { input in
                Result { () throws(WeirError) in
                    try context.decompressFrame(input, into: UnsafeMutableRawBufferPointer(output))
                }
            }
            initialized = (try? outcome.get()).map { min($0, size) } ?? 0
        }
        let written: Int
        do throws(WeirError) {
            written = try outcome.get()
        } catch {
            throw failure(of: frame, listed: size, error, declared: header?.contentSize != nil)
        }
        guard written == size else { throw tableMismatch(frame, listed: size, decoded: written) }
        // Decoded first: a damaged stored checksum is the frame's fault, found by libzstd.
        if header?.hasChecksum == true, source.count >= 4 {
            try source.withUnsafeBytes { all in
                Result { () throws(WeirError) in
                    try checkChecksum(of: frame, stored: UnsafeRawBufferPointer(rebasing: all[(all.count - 4)...]))
                }
            }.get()
        }
        return bytes
    }

    /// Streams `frame` from its start, handing `body` the bytes of `inner`
    /// (offsets within the frame's content); stops once past them, or with
    /// `toEnd` goes on to the frame's end, its checksum verified. A range
    /// that reaches the frame's end decodes it to its end too, which must be
    /// `size` bytes from its start.
    package func stream(_ frame: FrameListing.Frame, size: Int, _ inner: Range<Int>, toEnd: Bool = false,
                        _ body: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) {
        let context = try DecompressionContext(
            windowLogMax: options.windowLimit.logMax, verifyChecksum: options.verifyChecksum,
            dictionary: dictionary, prefix: options.patchReference, path: path)
        let toEnd = toEnd || inner.upperBound == size
        var decoder = FrameDecoder(context: context, path: path)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: FrameDecoder.pieceSize, alignment: 64)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: FrameDecoder.pieceSize, alignment: 64)
        defer {
            input.deallocate()
            output.deallocate()
        }
        var scratch = ScratchOutput(space: output)
        var produced = 0
        // The frame's header is checked against its entry before anything
        // of it is decoded; its last 4 bytes are kept for its checksum.
        var read = 0
        var header: FrameHeader?
        var last: [UInt8] = []
        // A header that contradicts the entry is the error as it is (not measured).
        var headerError: WeirError?
        do throws(WeirError) {
            try decoder.decodeFrame(in: file, at: frame.offset,
                                    compressedSize: frame.compressedSize, buffer: input, into: &scratch,
                                    onRead: { piece throws(WeirError) in
                if read == 0 {
                    do throws(WeirError) {
                        header = try checkHeader(of: frame, listed: size, head: piece)
                    } catch {
                        headerError = error
                        throw error
                    }
                }
                read += piece.count
                if header?.hasChecksum == true, toEnd {
                    last = Array((last + piece.suffix(4)).suffix(4))
                }
            }) { piece throws(WeirError) in
                // The piece may end before the range starts: then nothing of it is wanted.
                let from = max(produced, inner.lowerBound), to = min(produced + piece.count, inner.upperBound)
                if from < to {
                    try body(UnsafeRawBufferPointer(rebasing: piece[(from - produced) ..< (to - produced)]))
                }
                produced += piece.count
                return toEnd || produced < inner.upperBound
            }
        } catch {
            throw headerError ?? failure(of: frame, listed: size, error, declared: header?.contentSize != nil)
        }
        guard produced >= inner.upperBound, !toEnd || produced == size else {
            throw tableMismatch(frame, listed: size, decoded: produced)
        }
        if header?.hasChecksum == true, toEnd, last.count == 4 {
            try last.withUnsafeBytes { stored in
                Result { () throws(WeirError) in try checkChecksum(of: frame, stored: stored) }
            }.get()
        }
    }
}
