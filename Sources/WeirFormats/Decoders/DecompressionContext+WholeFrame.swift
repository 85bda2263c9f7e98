import CZstd
import Dispatch
import WeirSystem

/// Whole frames decoded by a ``DecompressionContext``: in one pass, or by the
/// one streaming loop (``FrameDecoder``) where one pass refuses a frame, is
/// followed step by step, or the frame comes in pieces. Here, above the
/// context, so that the libzstd wrapper never reaches up into the decoders.
extension DecompressionContext {
    /// Decodes `source`, which must hold whole frames, in one pass straight
    /// into `destination` (`ZSTD_decompressDCtx`: no window buffer, no copy).
    /// Checksums are verified unless the context was made with
    /// `verifyChecksum: false`; a frame declaring a content size must decode
    /// to exactly that size.
    ///
    /// libzstd's one-pass decoder is stricter than its streaming decoder,
    /// which `zstd -d` uses and which is the reference: it refuses a
    /// compressed block of size 0 (a valid empty block that
    /// `ZSTD_decompressStream` skips, issue 49). So a frame it refuses is
    /// decoded again by the streaming decoder, and only when that fails too
    /// is the one-pass error thrown: every frame zstd decodes, weir decodes,
    /// and the fast path stays the common one.
    ///
    /// - Returns: the bytes written to `destination`.
    /// - Throws: ``WeirError`` `.corrupt`, `.checksumMismatch`, or `.library`
    ///   when `destination` is too small.
    package func decompressFrame(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(WeirError) -> Int {
        if consumed != nil {
            // Streamed in steps told to `consumed`, straight into
            // `destination`, with the same checks as a frame in pieces.
            return try decodeWhole(into: destination) { (decoder, output) throws(WeirError) in
                try decoder.decode(source, into: &output)
            }
        }
        let result = decompressOnePass(source, into: destination)
        guard ZSTD_isError(result) != 0 else { return result }
        if let streamed = streamedFrames(source, into: destination) { return streamed }
        return try checked(result)
    }

    /// `source`, whole frames, decoded by `ZSTD_decompressStream` into
    /// `destination`: the bytes written, or nil when it fails, does not end
    /// at the end of a frame, or does not fit.
    private func streamedFrames(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) -> Int? {
        reset()
        defer { reset() }
        var decoder = FrameDecoder(context: self, path: path, followsFrames: true)
        var output = InPlaceOutput(destination)
        do throws(WeirError) {
            try decoder.decode(source, into: &output)
            try decoder.checkEnded()
        } catch {
            return nil
        }
        return output.filled
    }

    /// Decodes one whole frame that arrives in several pieces (the regions of
    /// a `DispatchData`) straight into `destination`, without first copying
    /// the pieces together: `ZSTD_decompressStream` with the whole frame's
    /// output as one stable buffer, so it needs no window buffer either; it
    /// copies only a block cut by the end of a piece (into its input buffer,
    /// one block long). Needs a context made with `stableOutput: true`.
    /// Checks as ``decompressFrame(_:into:)`` does, and that the pieces end
    /// exactly where the frame ends.
    ///
    /// - Returns: the bytes written to `destination`.
    package func decompressFrame(
        pieces source: DispatchData, into destination: UnsafeMutableRawBufferPointer
    ) throws(WeirError) -> Int {
        try decodeWhole(into: destination) { (decoder, output) throws(WeirError) in
            try decoder.decode(source, into: &output)
        }
    }

    /// Runs `feed` with a fresh decoder and `destination` as its output,
    /// then checks that the frame ended; the bytes written.
    private func decodeWhole(
        into destination: UnsafeMutableRawBufferPointer,
        _ feed: (inout FrameDecoder, inout InPlaceOutput) throws(WeirError) -> Bool
    ) throws(WeirError) -> Int {
        reset()
        var decoder = FrameDecoder(context: self, path: path)
        var output = InPlaceOutput(destination)
        do throws(WeirError) {
            _ = try feed(&decoder, &output)
            try decoder.checkEnded()
        } catch {
            reset()
            throw error
        }
        return output.filled
    }
}
