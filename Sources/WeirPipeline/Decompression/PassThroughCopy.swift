import Dispatch
import WeirSystem

/// Copies an input that is not zstd to the output unchanged (`-dcf`,
/// `--pass-through`), through the same channels as every pipeline:
///
///     input fd ─▶ ChunkReader (a mapped file, or a DispatchIO stream channel)
///        │  one read of `readSize` at a time, on the thread "weir.copy",
///        │  after taking one of `slots` in-flight places
///        ▼
///     OrderedWriter (DispatchIO channel, queue "weir.write"): each read
///        │  as one numbered piece, in order, sparse when asked
///        ▼
///     output fd; a written piece gives its slot back.
///
/// Bound: ``slots`` reads between reading and written, so a slow consumer
/// stops the reader and memory stays at `slots × readSize`.
final class PassThroughCopy: Sendable {
    /// Reads in flight: one being written, one read ahead, and two more so
    /// that a pipe producer and consumer of uneven speed both keep moving.
    static let slots = 4

    private let ends: StreamEnds
    private let options: DecompressionOptions
    private let control = RunControl(slots: PassThroughCopy.slots)

    /// Prepares a copy; the descriptors remain the caller's to close. With no
    /// output (`-t`), the input is read and dropped.
    init(input: Descriptor, output: PipelineOutput?, inputName: String, outputName: String,
         options: DecompressionOptions, observer: ProgressObserver?) {
        ends = StreamEnds(input: input, output: output, inputName: inputName, outputName: outputName,
                          observer: observer)
        self.options = options
    }

    /// Stops the copy from another thread; `run()` throws `.cancelled`.
    func cancel() {
        control.fail(.cancelled(path: ends.inputName, operation: .copy))
    }

    /// Copies until the end of the input, a failure or ``cancel()``.
    ///
    /// - Returns: the bytes read and written (`frames` is 0).
    /// - Throws: `WeirError` naming the file and the operation that failed.
    func run() throws(WeirError) -> Statistics {
        let control = self.control
        // A written piece's ticket frees its slot.
        let run = ends.run(control: control, kind: ends.kind, readSize: options.readSize, mapFiles: options.mapInput,
                           sizesReadBuffers: options.sizesReadBuffers, sparse: options.sparse)
        let reader = run.reader

        let bytesIn = Locked(0)
        control.startThread(name: "weir.copy") {
            var index = 0
            while let ticket = control.takeSlot() {
                let chunk: (data: DispatchData, endOfInput: Bool)
                do throws(WeirError) {
                    chunk = try reader.start().wait()
                    try reader.checkUnchanged()
                } catch {
                    control.fail(error)
                    ticket.release()
                    break
                }
                bytesIn.withLock { $0 += chunk.data.count }
                if chunk.data.count == 0 {
                    ticket.release()
                } else {
                    run.submit(index, chunk.data, ticket: ticket)
                    index += 1
                }
                if chunk.endOfInput { break }
            }
        }

        control.activity.wait()
        var statistics = try run.end(bytesIn: bytesIn.current)
        statistics.frames = 0
        return statistics
    }
}
