import Dispatch
import Glibc
import SystemPackage

/// One input, by name, processed to one destination with the safety habits of
/// zstd: output under its name only when complete, never over the input,
/// never over an existing file without `force`, permissions and modification
/// time carried over, the input removed only after success when asked.
package struct FileJob: Sendable {
    /// What to do with the input.
    package enum Operation: Sendable {
        /// Compress with these options.
        case compress(CompressionOptions)
        /// Decompress with these options.
        case decompress(DecompressionOptions)
        /// Decompress and verify, writing nothing (`-t`).
        case test(DecompressionOptions)
    }

    /// Where the output goes.
    package enum Destination: Sendable, Equatable {
        /// A file, created safely.
        case file(String)
        /// The process's standard output.
        case standardOutput
        /// Nowhere (`-t`).
        case none
    }

    /// The input path; `-` is standard input.
    package var input: String
    /// What to do.
    package var operation: Operation
    /// Where the output goes.
    package var destination: Destination
    /// Overwrite an existing output file.
    package var force: Bool
    /// Remove the input after success (`--rm`); only for file to file.
    package var removeInput: Bool

    /// Creates a job.
    package init(input: String, operation: Operation, destination: Destination,
                force: Bool = false, removeInput: Bool = false) {
        self.input = input
        self.operation = operation
        self.destination = destination
        self.force = force
        self.removeInput = removeInput
    }

    /// The name errors and summaries give the input.
    package var inputName: String { input == "-" ? "(stdin)" : input }

    /// The name errors and summaries give the output.
    package var outputName: String {
        switch destination {
        case .file(let path): return path
        case .standardOutput: return "(stdout)"
        case .none: return "(none)"
        }
    }

    /// The outcome of a job.
    package typealias Outcome = Result<Statistics, WeirError>

    /// Runs the job on the calling thread (not a GCD worker) and waits for
    /// its end: the pipeline started, waited for, then its output committed
    /// (`CommitQueue`): synced unless `sync`
    /// is false, named, its folder synced before the input is removed.
    ///
    /// - Returns: the pipeline's statistics.
    /// - Throws: ``WeirError``; no output file is left behind and the input is
    ///   untouched.
    package func run(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                    smallFiles: SmallFileCompressor? = nil, sync: Bool = true) throws(WeirError) -> Statistics {
        let commits = CommitQueue(sync: sync)
        commits.add(0, finish(observer: observer, cancellation: cancellation, smallFiles: smallFiles, sync: sync))
        return try commits.commitAll()[0].outcome.get()
    }

    /// Runs the job on the calling thread and waits for its end, leaving its
    /// output to commit (see ``start(observer:cancellation:smallFiles:sync:finished:)``).
    package func finish(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                        smallFiles: SmallFileCompressor? = nil, sync: Bool = true) -> Result<FinishedJob, WeirError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<FinishedJob, WeirError>?>(nil)
        start(observer: observer, cancellation: cancellation, smallFiles: smallFiles, sync: sync) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.current!
    }

    /// Runs the job on the calling thread (not a GCD worker), but for the
    /// write of a small file's output: calls `finished` once, with the
    /// outcome, on this thread or on a GCD worker.
    ///
    /// - Parameters:
    ///   - observer: told of the bytes read and written.
    ///   - cancellation: lets another thread (a signal handler) stop the run.
    ///   - smallFiles: when given, compresses a regular file that makes one
    ///     frame into a file without a pipeline (same bytes, less setup),
    ///     returns once its output is handed to DispatchIO, and finishes the
    ///     job when the write ends; one per thread running jobs.
    ///   - sync: whether the output file will be synced when committed: a
    ///     streamed one then has its writeback started as it is written.
    ///   - finished: the finished job, its output complete and not yet
    ///     committed, or the ``WeirError``, after which no output file is
    ///     left behind and the input is untouched.
    package func start(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                       smallFiles: SmallFileCompressor? = nil, sync: Bool = true,
                       finished: @escaping @Sendable (Result<FinishedJob, WeirError>) -> Void) {
        let started = DispatchTime.now()
        let inputFD: Int32
        var inputStatus: FileStatus?
        if input == "-" {
            inputFD = STDIN_FILENO
        } else {
            inputFD = FileName.withCString(input) { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
            guard inputFD >= 0 else { return finished(.failure(.system(errno, path: input, operation: .open))) }
        }
        defer { if inputFD != STDIN_FILENO { Glibc.close(inputFD) } }
        var outputFile: OutputFile?
        let outputFD: Int32?
        do throws(WeirError) {
            if input != "-" { inputStatus = try Self.readableStatus(of: inputFD, path: input, force: force) }
            switch destination {
            case .file(let path):
                if let inputStatus, let existing = FileStatus.of(path: path), existing.isSameFile(as: inputStatus) {
                    throw WeirError.sameFile(path: input, output: path)
                }
                let file = try OutputFile(path: path, force: force)
                outputFile = file
                outputFD = file.descriptor
            case .standardOutput:
                outputFD = STDOUT_FILENO
            case .none:
                outputFD = nil
            }
        } catch {
            return finished(.failure(error))
        }

        // A small file is compressed on this thread alone: its CPU is this
        // thread's (other threads may be running other files).
        if case .compress(let options) = operation, let smallFiles, let outputFile, let inputStatus,
           inputStatus.isRegularFile, SmallFileCompressor.accepts(size: inputStatus.size, options: options),
           cancellation?.isCancelled != true {
            let usage = ResourceUsage.currentThread()
            let compressed: (output: DispatchData, statistics: Statistics)
            do throws(WeirError) {
                compressed = try smallFiles.compress(inputFD, size: inputStatus.size, inputName: inputName,
                                                     outputName: outputName, options: options, observer: observer)
            } catch {
                outputFile.discard()
                return finished(.failure(error))
            }
            let statistics = compressed.statistics.measuringUsage(since: usage, now: .currentThread())
            // The write is DispatchIO's; this thread goes on to its next job.
            DispatchIO.write(toFileDescriptor: outputFile.descriptor, data: compressed.output,
                             runningHandlerOn: .global()) { _, error in
                finished(Result { () throws(WeirError) in
                    do throws(WeirError) {
                        if error != 0 { throw WeirError.system(error, path: outputName, operation: .write) }
                        observer?.bytesWritten(statistics.bytesOut)
                        var timed = statistics
                        timed.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
                        return try done(timed, outputFile, copying: inputStatus, cancellation: cancellation)
                    } catch {
                        outputFile.discard()
                        throw error
                    }
                })
            }
            return
        }
        finished(Result { () throws(WeirError) in
            let usage = ResourceUsage.current()
            do throws(WeirError) {
                let output = outputFD.map { PipelineOutput.descriptor($0, writeBack: sync && outputFile?.temporaryPath != nil) }
                let statistics = try runPipeline(input: inputFD, output: output, observer: observer,
                                                 cancellation: cancellation).measuringUsage(since: usage)
                return try done(statistics, outputFile, copying: inputStatus, cancellation: cancellation)
            } catch {
                outputFile?.discard()
                throw error
            }
        })
    }

    /// The status of an input file, unless it is one weir does not read:
    /// a directory, or (as zstd) a device or socket (/dev/zero,
    /// /dev/urandom) unless forced; a FIFO is read like a pipe.
    private static func readableStatus(of fd: Int32, path: String, force: Bool) throws(WeirError) -> FileStatus {
        let status = try FileStatus.of(descriptor: fd, path: path)
        if status.isDirectory {
            throw WeirError.notRegularFile(path: path, operation: .open, .directory)
        }
        if !status.isRegularFile && !status.isFIFO && !force {
            throw WeirError.notRegularFile(path: path, operation: .open, .skipped)
        }
        return status
    }

    /// Ends a job whose output is complete, unless the run was cancelled:
    /// the output gets the input's owner, mode and times and waits for its
    /// commit. The input goes only when its data is safe in a regular file,
    /// never after writing it into a device or FIFO.
    private func done(_ statistics: Statistics, _ outputFile: OutputFile?, copying inputStatus: FileStatus?,
                      cancellation: Cancellation?) throws(WeirError) -> FinishedJob {
        if cancellation?.isCancelled == true {
            throw WeirError.cancelled(path: inputName, operation: .run)
        }
        outputFile?.stamp(copying: inputStatus?.isRegularFile == true ? inputStatus : nil)
        return FinishedJob(statistics: statistics, output: outputFile, input: input, removesInput: removeInput)
    }

    private func runPipeline(input: Int32, output: PipelineOutput?, observer: ProgressObserver?,
                             cancellation: Cancellation?) throws(WeirError) -> Statistics {
        switch operation {
        case .compress(let options):
            let pipeline = CompressionPipeline(input: .descriptor(input), output: output ?? .descriptor(STDOUT_FILENO),
                                               inputName: inputName, outputName: outputName,
                                               options: options, observer: observer)
            let key = cancellation?.attach { pipeline.cancel() }
            defer { if let key { cancellation?.detach(key) } }
            let statistics = try pipeline.run()
            if let expected = options.streamSize, InputKind.of(FileDescriptor(rawValue: input)).size == nil,
               statistics.bytesIn != expected {
                throw WeirError.sizeMismatch(path: inputName, operation: .compress, actual: statistics.bytesIn,
                                             declared: expected)
            }
            return statistics
        case .decompress(let options) where try Self.passesThrough(input, options: options, path: inputName),
             .test(let options) where try Self.passesThrough(input, options: options, path: inputName):
            let copy = PassThroughCopy(input: input, output: output, inputName: inputName, outputName: outputName,
                                       options: options, observer: observer)
            let key = cancellation?.attach { copy.cancel() }
            defer { if let key { cancellation?.detach(key) } }
            return try copy.run()
        case .decompress(let options), .test(let options):
            let pipeline = DecompressionPipeline(input: .descriptor(input), output: output,
                                                 inputName: inputName, outputName: outputName,
                                                 options: options, observer: observer)
            let key = cancellation?.attach { pipeline.cancel() }
            defer { if let key { cancellation?.detach(key) } }
            return try pipeline.run()
        }
    }

    /// Whether `input` is copied through rather than decoded: pass-through
    /// is on and the input does not start with a zstd or skippable frame's
    /// magic number, as zstd 1.5.4 decides: an input of 1 to 3 bytes passes
    /// through; an empty one does not (it is refused as not zstd, as zstd
    /// refuses it). An input that cannot be looked at without reading it (a
    /// terminal, a device) is decoded.
    static func passesThrough(_ input: Int32, options: DecompressionOptions, path: String) throws(WeirError) -> Bool {
        guard options.passThrough, let first = try InputPeek.firstBytes(of: input, count: 4, path: path),
              !first.isEmpty else { return false }
        return !startsFrame(first)
    }

    /// Whether `bytes` begin with the magic number of a zstd frame
    /// (`0xFD2FB528`) or of a skippable frame (`0x184D2A50`…`0x184D2A5F`),
    /// little-endian; fewer than four bytes never do.
    static func startsFrame(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        let magic = bytes.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return magic == 0xFD2F_B528 || magic & 0xFFFF_FFF0 == 0x184D_2A50
    }
}
