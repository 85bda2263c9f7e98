import Glibc
import SystemPackage

/// One input, by name, processed to one destination with the safety habits of
/// zstd: output under its name only when complete, never over the input,
/// never over an existing file without `force`, permissions and modification
/// time carried over, the input removed only after success when asked.
public struct FileJob: Sendable {
    /// What to do with the input.
    public enum Operation: Sendable {
        /// Compress with these options.
        case compress(CompressionOptions)
        /// Decompress with these options.
        case decompress(DecompressionOptions)
        /// Decompress and verify, writing nothing (`-t`).
        case test(DecompressionOptions)
    }

    /// Where the output goes.
    public enum Destination: Sendable, Equatable {
        /// A file, created safely.
        case file(String)
        /// The process's standard output.
        case standardOutput
        /// Nowhere (`-t`).
        case none
    }

    /// The input path; `-` is standard input.
    public var input: String
    /// What to do.
    public var operation: Operation
    /// Where the output goes.
    public var destination: Destination
    /// Overwrite an existing output file.
    public var force: Bool
    /// Remove the input after success (`--rm`); only for file to file.
    public var removeInput: Bool

    /// Creates a job.
    public init(input: String, operation: Operation, destination: Destination,
                force: Bool = false, removeInput: Bool = false) {
        self.input = input
        self.operation = operation
        self.destination = destination
        self.force = force
        self.removeInput = removeInput
    }

    /// The name errors and summaries give the input.
    public var inputName: String { input == "-" ? "(stdin)" : input }

    /// The name errors and summaries give the output.
    public var outputName: String {
        switch destination {
        case .file(let path): return path
        case .standardOutput: return "(stdout)"
        case .none: return "(none)"
        }
    }

    /// Runs the job on the calling thread (not a GCD worker).
    ///
    /// - Parameters:
    ///   - observer: told of the bytes read and written.
    ///   - cancellation: lets another thread (a signal handler) stop the run.
    ///   - smallFiles: when given, compresses a regular file that makes one
    ///     frame into a file without a pipeline (same bytes, less setup);
    ///     one per thread running jobs.
    /// - Returns: the pipeline's statistics.
    /// - Throws: ``WeirError``; no output file is left behind and the input is
    ///   untouched.
    public func run(observer: ProgressObserver? = nil, cancellation: Cancellation? = nil,
                    smallFiles: SmallFileCompressor? = nil) throws(WeirError) -> Statistics {
        let inputFD: Int32
        var inputStatus: FileStatus?
        if input == "-" {
            inputFD = STDIN_FILENO
        } else {
            inputFD = FileName.withCString(input) { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
            guard inputFD >= 0 else { throw WeirError.system(errno, path: input, operation: .open) }
        }
        defer { if inputFD != STDIN_FILENO { Glibc.close(inputFD) } }
        if input != "-" {
            let status = try FileStatus.of(descriptor: inputFD, path: input)
            if status.isDirectory {
                throw WeirError.notRegularFile(path: input, operation: .open, .directory)
            }
            // As zstd: a device or socket (/dev/zero, /dev/urandom) is only
            // read when forced; a FIFO is read like a pipe.
            if !status.isRegularFile && !status.isFIFO && !force {
                throw WeirError.notRegularFile(path: input, operation: .open, .skipped)
            }
            inputStatus = status
        }

        var outputFile: OutputFile?
        let outputFD: Int32?
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

        let statistics: Statistics
        // A small file is compressed on this thread alone: its CPU is this
        // thread's (other threads may be running other files).
        var smallFile: (compressor: SmallFileCompressor, options: CompressionOptions, size: Int, output: Int32)?
        if case .compress(let options) = operation, let smallFiles, outputFile != nil, let inputStatus,
           inputStatus.isRegularFile, SmallFileCompressor.accepts(size: inputStatus.size, options: options),
           let outputFD, cancellation?.isCancelled != true {
            smallFile = (smallFiles, options, inputStatus.size, outputFD)
        }
        let usage = smallFile == nil ? ResourceUsage.current() : ResourceUsage.currentThread()
        do throws(WeirError) {
            if let smallFile {
                statistics = try smallFile.compressor.compress(inputFD, size: smallFile.size, to: smallFile.output,
                                                               inputName: inputName, outputName: outputName,
                                                               options: smallFile.options, observer: observer)
                    .measuringUsage(since: usage, now: .currentThread())
            } else {
                statistics = try runPipeline(input: inputFD, output: outputFD, observer: observer, cancellation: cancellation)
                    .measuringUsage(since: usage)
            }
            if cancellation?.isCancelled == true {
                throw WeirError.cancelled(path: inputName, operation: .run)
            }
            try outputFile?.commit(copying: inputStatus?.isRegularFile == true ? inputStatus : nil)
        } catch {
            outputFile?.discard()
            throw error
        }
        // The input goes only when its data is safe in a regular file, never
        // after writing it into a device or FIFO.
        if removeInput, input != "-", let outputFile, !outputFile.isInPlace {
            if FileName.withCString(input, unlink) != 0 {
                throw WeirError.system(errno, path: input, operation: .remove)
            }
        }
        return statistics
    }

    private func runPipeline(input: Int32, output: Int32?, observer: ProgressObserver?,
                             cancellation: Cancellation?) throws(WeirError) -> Statistics {
        switch operation {
        case .compress(let options):
            let pipeline = CompressionPipeline(input: .descriptor(input), output: .descriptor(output ?? STDOUT_FILENO),
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
            let pipeline = DecompressionPipeline(input: .descriptor(input), output: output.map { .descriptor($0) },
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
