import Dispatch
import Glibc
import SystemPackage
import WeirPipeline
import WeirSystem
import WeirTar

/// `weir -d --member=PATTERN`: a tar stream of the members of a `.tar.zst`
/// that the patterns select (``TarMemberSelection``), in archive order, each
/// member's bytes as they stand in the content, then tar's end blocks,
/// written through DispatchIO (a ``RangeOutput``). Only the frames that hold
/// those members are read and decoded (``TarArchive``, its
/// ``SeekableReader``); every member's header blocks are checked against
/// the index before a byte of it goes out. A ``Cancellation`` stops it
/// between pieces.
///
/// From a pipe (``stream(input:patterns:options:output:cancellation:)``),
/// where no index can be read, the content is decoded as it comes (the
/// engine's decompression, writing into an internal pipe that this thread
/// reads) and the members are picked as they pass (``TarStreamFilter``).
package enum TarMemberExtraction {
    /// What an extraction did.
    package struct Outcome: Sendable, Equatable {
        /// The members written.
        package var members = 0
        /// Bytes written, end blocks included.
        package var bytesOut = 0
        /// Frames decoded (a frame counts once per member it holds).
        package var framesRead = 0
        /// The patterns that matched no member: tar's "Not found in archive".
        package var unmatched: [TarMemberPattern] = []
        /// From a stream: hard links kept whose target went by unselected.
        package var missedLinkTargets: [[UInt8]] = []
        /// From a file: hard links kept whose target comes after them in the
        /// archive, which `tar x` cannot make (from the whole archive either).
        package var linksToLaterMembers: [TarMemberSelection.LinkToLater] = []
    }

    /// The tar's two zero end blocks.
    static let endBlocks = [UInt8](repeating: 0, count: 2 * TarHeaderCheck.block)

    /// The members of the file at `path` that `patterns` select, as a tar
    /// stream to `output`.
    package static func file(path: String, patterns: [TarMemberPattern], options: DecompressionOptions,
                             output: Descriptor, cancellation: Cancellation? = nil) throws(WeirError) -> Outcome {
        // The index is checked by the walk that selects: one walk of it, not two. The first member's frames
        // are decoded meanwhile.
        let archive = try TarArchive(path: path, options: options, checkingIndex: false)
        let selection = try archive.selectingAhead(patterns)
        var outcome = Outcome(members: selection.members.count, unmatched: selection.unmatched,
                              linksToLaterMembers: selection.linksToLaterMembers)
        let sink = RangeOutput(output)
        do throws(WeirError) {
            outcome.framesRead = try archive.writeTar(of: selection.members) { piece throws(WeirError) in
                if cancellation?.isCancelled == true {
                    throw WeirError.cancelled(path: path, operation: .decompress)
                }
                try sink.write(piece)
                outcome.bytesOut += piece.count
            }
            try sink.finish()
        } catch {
            sink.stop(error)
            throw error
        }
        return outcome
    }

    /// The members of the tar stream that the zstd stream `input` holds
    /// that `patterns` select, as a tar stream to `output`, in one pass.
    ///
    /// Threads: the decompression runs on the engine's queues and writes
    /// into a pipe; the calling thread (never a GCD worker: it blocks)
    /// reads the pipe, filters, and writes through a ``RangeOutput``.
    package static func stream(input: Descriptor, patterns: [TarMemberPattern], options: DecompressionOptions,
                               output: Descriptor, cancellation: Cancellation? = nil) throws(WeirError) -> Outcome {
        let inputName = input.path
        let ends: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do {
            ends = try FileDescriptor.pipe()
        } catch {
            throw WeirError.system((error as? Errno)?.rawValue ?? EMFILE, path: inputName, operation: .pipe)
        }
        let reading = Descriptor(ends.readEnd.rawValue, path: inputName), writing = ends.writeEnd.rawValue
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<Statistics, WeirError>?>(nil)
        // The decompression pipeline itself, as `Decompressor`'s descriptor
        // form runs it (its options planned, the descriptors named by number),
        // on a thread of its own: its `run()` blocks.
        let run = DecompressionPipeline(
            input: FileDescriptor(rawValue: input.fd), output: FileDescriptor(rawValue: writing),
            inputName: "(fd \(input.fd))", outputName: "(fd \(writing))",
            options: WorkerPlan.applied(to: options).options)
        DedicatedThread.start(name: "weir.decompress.fd") {
            let outcome = Result { () throws(WeirError) in try run.run() }
            result.withLock { $0 = outcome }
            // The pipe's end: this thread's read sees it once the decoder is done.
            Glibc.close(writing)
            done.signal()
        }
        var filter = TarStreamFilter(patterns: patterns, path: inputName)
        let sink = RangeOutput(output)
        var outcome = Outcome()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        // Whether the decoder's end was waited for (once: the semaphore is balanced).
        var ended = false
        do throws(WeirError) {
            while true {
                if cancellation?.isCancelled == true {
                    throw WeirError.cancelled(path: inputName, operation: .decompress)
                }
                let got = try reading.readSome(into: buffer)
                if got == 0 { break }
                try filter.consume(UnsafeRawBufferPointer(rebasing: buffer[..<got])) { piece throws(WeirError) in
                    try sink.write(piece)
                    outcome.bytesOut += piece.count
                }
            }
            done.wait()
            ended = true
            if case .failure(let error)? = result.current { throw error }
            guard filter.endsWell else { throw WeirError.tarEndsEarly(path: inputName, at: filter.offset) }
            try endBlocks.withUnsafeBytes { all in Result { () throws(WeirError) in try sink.write(all) } }.get()
            outcome.bytesOut += endBlocks.count
            try sink.finish()
        } catch {
            // The decoder, if still writing, meets a closed pipe (EPIPE) or the stop.
            run.cancel()
            reading.close()
            if !ended { done.wait() }
            sink.stop(error)
            throw error
        }
        reading.close()
        outcome.members = filter.members
        outcome.unmatched = filter.unmatched
        outcome.missedLinkTargets = filter.missedLinkTargets
        return outcome
    }
}
