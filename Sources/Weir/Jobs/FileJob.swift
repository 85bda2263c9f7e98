import Dispatch
import Glibc
import WeirFiles
import WeirPipeline
import WeirSeekable
import WeirSystem

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
        /// An open file, named as the descriptor is, that several jobs write
        /// in turn, each after the one before (several inputs into one
        /// output); its owner creates and commits it.
        case shared(Descriptor)
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
        case .shared(let file): return file.path
        case .none: return "(none)"
        }
    }

    /// The outcome of a job.
    package typealias Outcome = Result<Statistics, WeirError>

    /// Runs the job on the calling thread (not a GCD worker) and commits its
    /// output (``CommitQueue``): synced unless `sync` is false, named, its
    /// folder synced before the input is removed.
    ///
    /// - Returns: the pipeline's statistics.
    /// - Throws: `WeirError`; no output file is left behind and the input is
    ///   untouched.
    package func run(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                     sync: Bool = true) throws(WeirError) -> Statistics {
        let commits = CommitQueue(sync: sync)
        commits.add(
            0,
            Result { () throws(WeirError) in try process(observer: observer, cancellation: cancellation, sync: sync) })
        return try commits.commitAll()[0].outcome.get()
    }

    /// Runs the job on the calling thread (not a GCD worker) and returns it
    /// finished: its output complete and not yet committed.
    ///
    /// - Parameters:
    ///   - observer: told of the bytes read and written.
    ///   - cancellation: lets another thread (a signal handler) stop the run.
    ///   - smallFiles: when given, compresses a regular file that makes one
    ///     frame without a pipeline (same bytes, less setup); one per thread
    ///     running jobs.
    ///   - sync: whether the output file will be synced when committed: a
    ///     streamed one then has its writeback started as it is written.
    /// - Throws: `WeirError`, after which no output file is left behind and
    ///   the input is untouched.
    package func process(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                         smallFiles: SmallFileCompressor? = nil, sync: Bool = true) throws(WeirError) -> FinishedJob {
        let finished = try processed(observer: observer, cancellation: cancellation, smallFiles: smallFiles,
                                     sync: sync)
        // -t checks a tar's member index as it checks the seek table (issue
        // 67), as part of the job: an index that lies fails the job, whose
        // end then says so (not "ok", then an error).
        if case .test(let options) = operation, input != "-", FileStatus.of(path: input)?.isRegularFile == true {
            try TarArchive.checkIndex(path: input, options: options)
        }
        return finished
    }

    private func processed(observer: ProgressObserver?, cancellation: Cancellation?,
                           smallFiles: SmallFileCompressor?, sync: Bool) throws(WeirError) -> FinishedJob {
        let started = DispatchTime.now()
        let opened = try open()
        defer { opened.closeInput() }
        guard let smallFiles, let small = opened.small(operation, cancellation: cancellation) else {
            return try streamed(opened, observer: observer, cancellation: cancellation, sync: sync)
        }
        do throws(WeirError) {
            let statistics = try compressSmall(opened, small, with: smallFiles, observer: observer)
            observer?.bytesWritten(statistics.bytesOut)
            observer?.frameWritten()  // a small file is one frame
            var timed = statistics
            timed.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            return try done(timed, opened, cancellation: cancellation)
        } catch {
            opened.outputFile?.discard()
            throw error
        }
    }

    /// What both paths share: the input open, its status, the output created.
    private struct Opened {
        let inputFD: Descriptor
        let inputStatus: FileStatus?
        let outputFile: OutputFile?
        let outputFD: Descriptor?
        /// What the user should know of the output (a warning of the run).
        var notice: String?

        /// Creates the output of `destination`, named `outputName`, for an
        /// input open as `inputFD` (named `input`, nil for standard input);
        /// a resumable one when `operation` asks for it and the input allows it.
        init(inputFD: Descriptor, inputStatus: FileStatus?, output destination: Destination, outputName: String,
             input: String?, force: Bool, operation: Operation) throws(WeirError) {
            self.inputFD = inputFD
            self.inputStatus = inputStatus
            switch destination {
            case .file(let path):
                if let input, let inputStatus, let existing = FileStatus.of(path: path),
                   existing.isSameFile(as: inputStatus) {
                    throw WeirError.sameFile(path: input, output: path)
                }
                let resumable = try FileJob.resumableOutput(path, force: force, operation: operation, input: inputFD,
                                                            status: inputStatus)
                let file = if let output = resumable.output { output } else { try OutputFile(path: path, force: force) }
                outputFile = file
                outputFD = file.descriptor
                notice = resumable.notice
            case .standardOutput:
                outputFile = nil
                outputFD = Descriptor(STDOUT_FILENO, path: outputName)
            case .shared(let file):
                outputFile = nil
                outputFD = file
            case .none:
                outputFile = nil
                outputFD = nil
            }
        }

        /// A job that ``SmallFileCompressor`` does: compressing a regular
        /// file that makes one frame into a file, not cancelled, nor
        /// streamed as zstd streams standard input (the pipeline does that).
        func small(
            _ operation: Operation, cancellation: Cancellation?
        ) -> (options: CompressionOptions, size: Int, output: OutputFile)? {
            // The size of a file that can be trusted (not procfs's 0): the
            // small path reads that many bytes.
            guard case .compress(let options) = operation, !options.streamsSoleFrame, let outputFile, let inputStatus,
                  let size = InputKind.trustedSize(of: inputFD, status: inputStatus),
                  SmallFileCompressor.accepts(size: size, options: options),
                  !SmallFileCompressor.wantsMemberIndex(inputFD, size: size, options: options),
                  cancellation?.isCancelled != true else { return nil }
            return (options, size, outputFile)
        }

        func closeInput() { if inputFD.fd != STDIN_FILENO { inputFD.close() } }
    }

    /// Opens the input and creates the output, refusing what weir does not
    /// overwrite or read.
    private func open() throws(WeirError) -> Opened {
        guard input != "-" else {
            try checkMemory(Descriptor(STDIN_FILENO, path: inputName))
            return try Opened(inputFD: Descriptor(STDIN_FILENO, path: inputName), inputStatus: nil, output: destination,
                              outputName: outputName, input: nil, force: force, operation: operation)
        }
        let file = try Descriptor.openForReading(input)
        do throws(WeirError) {
            let status = try Self.readableStatus(of: file, force: force)
            try checkMemory(file)
            return try Opened(inputFD: file, inputStatus: status, output: destination, outputName: outputName,
                              input: input, force: force, operation: operation)
        } catch {
            file.close()
            throw error
        }
    }

    /// Refuses, before the output is made, a compression that one worker
    /// cannot do within the process's memory limit (`CompressionMemory`):
    /// the input's size is a regular file's, else `--stream-size`'s or
    /// `--size-hint`'s.
    private func checkMemory(_ input: Descriptor) throws(WeirError) {
        guard case .compress(let options) = operation, options.memoryLimit != nil else { return }
        let fileSize = InputKind.of(input).size
        try CompressionMemory.check(options, inputSize: fileSize ?? options.streamSize ?? options.streamedSizeHint,
                                    regularFile: fileSize != nil, path: inputName)
    }

    /// Compresses a small file on this thread alone (its CPU is this
    /// thread's: other threads may be running other files) and writes its
    /// output with one `pwrite` from here: DispatchIO's per-channel cost
    /// (CPU per file) buys nothing for a single write
    /// (bench/results/2026-11-25-tree-pwrite.md).
    private func compressSmall(_ opened: Opened, _ small: (options: CompressionOptions, size: Int, output: OutputFile),
                               with smallFiles: SmallFileCompressor,
                               observer: ProgressObserver?) throws(WeirError) -> Statistics {
        let usage = ResourceUsage.currentThread()
        let statistics = try smallFiles.compress(opened.inputFD, size: small.size, outputName: outputName,
                                                 options: small.options, observer: observer) {
            (frame) throws(WeirError) in try small.output.write(frame)
        }
        return statistics.measuringUsage(since: usage, now: .currentThread())
    }

    /// Runs the job's pipeline from the input to the output; on failure the
    /// output is discarded.
    private func streamed(_ opened: Opened, observer: ProgressObserver?, cancellation: Cancellation?,
                          sync: Bool) throws(WeirError) -> FinishedJob {
        let usage = ResourceUsage.current()
        do throws(WeirError) {
            let output = opened.outputFD.map {
                PipelineOutput.descriptor($0, writeBack: sync && opened.outputFile?.temporaryPath != nil)
            }
            let statistics = try runPipeline(input: opened.inputFD, output: output, observer: observer,
                                             cancellation: cancellation, partial: opened.outputFile?.partial)
                .measuringUsage(since: usage)
            return try done(statistics, opened, cancellation: cancellation)
        } catch {
            // Stopped (a signal), or the input could not be read (a disk or a
            // network that may come back): a resumable output keeps what is
            // checkpointed, for the same command to go on from there. A
            // failure of the output's side (a full or failing disk, whose
            // space the user wants back) or of the data drops it, as zstd
            // drops its output.
            if error.kind == .cancelled || isInputReadFailure(error), let output = opened.outputFile,
               let partial = output.partial {
                partial.checkpointNow()
                output.keep()
                if partial.hasCheckpoint, let size = opened.inputStatus?.size, size > 0 {
                    let percent = 100 * Double(partial.checkpointedInput) / Double(size)
                    if error.kind == .cancelled {
                        throw WeirError.cancelled(path: inputName, keeping: partial.partPath, percent: percent)
                    }
                    throw error.keeping(partial.partPath, percent: percent)
                }
            } else {
                opened.outputFile?.discard()
            }
            throw error
        }
    }

    /// Whether `error` is a system call's failure to read this job's input.
    private func isInputReadFailure(_ error: WeirError) -> Bool {
        guard error.kind.errno != nil else { return false }
        return error.path == inputName && (error.operation == .read || error.operation == .map)
    }

    /// The status of an input file, unless it is one weir does not read:
    /// a directory, or (as zstd) a device or socket (/dev/zero,
    /// /dev/urandom) unless forced; a FIFO is read like a pipe.
    private static func readableStatus(of file: Descriptor, force: Bool) throws(WeirError) -> FileStatus {
        let path = file.path
        let status = try file.status()
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
    private func done(_ statistics: Statistics, _ opened: Opened,
                      cancellation: Cancellation?) throws(WeirError) -> FinishedJob {
        if cancellation?.isCancelled == true {
            throw WeirError.cancelled(path: inputName, operation: .run)
        }
        // A remote object's status is made up (its size only): the output gets the umask's mode, the time now.
        let copied = opened.inputStatus?.isRegularFile == true && opened.inputFD.source == nil
        opened.outputFile?.stamp(copying: copied ? opened.inputStatus : nil)
        var statistics = statistics
        if let notice = opened.notice { statistics.warnings.append(notice) }
        return FinishedJob(statistics: statistics, output: opened.outputFile, input: input, removesInput: removeInput)
    }

    private func runPipeline(input: Descriptor, output: PipelineOutput?, observer: ProgressObserver?,
                             cancellation: Cancellation?, partial: PartialOutput?) throws(WeirError) -> Statistics {
        switch operation {
        case .compress(let options):
            try skipKept(partial, input: input, observer: observer)
            let standardOutput = PipelineOutput.descriptor(Descriptor(STDOUT_FILENO, path: outputName))
            let pipeline = CompressionPipeline(input: .descriptor(input), output: output ?? standardOutput,
                                               inputName: inputName, outputName: outputName,
                                               options: options, observer: observer, partial: partial)
            let statistics = try run(cancellation: cancellation, partial: partial, cancel: { pipeline.cancel() },
                                     pipeline.run)
            // As zstd: --stream-size binds standard input, even a regular
            // file there (perhaps at an offset); a named file's size is its own.
            if let expected = options.streamSize, InputKind.of(input).size == nil || self.input == "-",
               statistics.bytesIn != expected {
                throw WeirError.sizeMismatch(path: inputName, operation: .compress, actual: statistics.bytesIn,
                                             declared: expected)
            }
            return statistics
        case .decompress(let options), .test(let options):
            try skipKept(partial, input: input, observer: observer)
            let pipeline = DecompressionPipeline(input: .descriptor(input), output: output,
                                                 inputName: inputName, outputName: outputName,
                                                 options: options, observer: observer, partial: partial)
            return try run(cancellation: cancellation, partial: partial, cancel: { pipeline.cancel() }, pipeline.run)
        }
    }

    /// Runs a pipeline (`body`) with `cancellation` attached to it (`cancel`
    /// stops it), and counts the frames `partial` kept in its statistics.
    private func run(cancellation: Cancellation?, partial: PartialOutput?, cancel: @escaping @Sendable () -> Void,
                     _ body: () throws(WeirError) -> Statistics) throws(WeirError) -> Statistics {
        let key = cancellation?.attach(cancel)
        defer { if let key { cancellation?.detach(key) } }
        var statistics = try body()
        if let partial { statistics.keep(partial, path: outputName) }
        return statistics
    }
}
