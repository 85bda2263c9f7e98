import Dispatch
import WeirFormats
import WeirSystem

/// Decodes frames small enough to be held whole on the workers, each
/// straight into an output buffer of its own.
///
/// The reading thread calls ``submit(_:data:capacity:expected:number:)``,
/// which waits for room in the budget (the back-pressure of the decoder);
/// from then on the frame belongs to one worker, and its buffer to the
/// writer once decoded. Its compressed bytes count in the budget until it
/// is decoded, its buffer until the buffer is unmapped.
struct WholeFrameDecoder: Sendable {
    let session: DecodeSession
    let pool: WorkerPool<DecodingWorker>

    /// Hands one whole frame to the workers as output piece `number`.
    func submit(_ boundary: FrameBoundary, data: DispatchData, capacity: Int,
                expected: SeekTableCheck.Expectation?, number: Int) throws(WeirError) {
        let compressed = boundary.compressedSize
        let (buffer, buffers) = try session.takeBuffer(capacity: capacity, extra: compressed)
        let session = self.session
        let control = session.control
        let ticket = control.ticket()
        pool.submit { worker in
            guard let context = worker?.zstd, !control.drops(piece: number) else {
                buffers.recycle(buffer)
                session.budget.release(compressed)
                ticket.release()
                return
            }
            do throws(WeirError) {
                let produced = try Self.decode(data, context: context,
                                               into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
                try session.checkContentSize(boundary, produced: produced)
                session.budget.release(compressed)
                try session.input.checkUnchanged()
                session.crossCheck.frameDecoded(boundary, produced: produced, expected: expected)
                session.frameDecoded()
                session.send(buffer, count: produced, from: buffers, number: number, ticket: ticket)
            } catch {
                buffers.recycle(buffer)
                // The frames before it are still written (RunControl).
                control.fail(DecodeSession.located(error, index: boundary.index, offset: boundary.offset),
                             atPiece: number)
                session.budget.release(compressed)
                ticket.release()
            }
        }
    }

    /// Decodes one whole frame straight into its buffer: in one pass when
    /// its bytes are one region, region by region when they span several
    /// read pieces (no copy to join them).
    private static func decode(_ data: DispatchData, context: DecompressionContext,
                               into destination: UnsafeMutableRawBufferPointer) throws(WeirError) -> Int {
        var regions = 0
        data.enumerateBytes { _, _, stop in
            regions += 1
            if regions > 1 { stop = true }
        }
        if regions > 1 { return try context.decompressFrame(pieces: data, into: destination) }
        var result: Result<Int, WeirError> = .success(0)
        let count = data.count
        data.withUnsafeBytes { (bytes: UnsafePointer<UInt8>) in
            do throws(WeirError) {
                result = .success(try context.decompressFrame(UnsafeRawBufferPointer(start: bytes, count: count),
                                                              into: destination))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }
}
