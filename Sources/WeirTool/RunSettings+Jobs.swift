import ArgumentParser
import Glibc
import Weir
import WeirCLI
import WeirFiles
import WeirRemote

/// Where each input's output goes, and the job that takes it there: names,
/// --exclude-compressed, standard output, and the decompression options.
extension RunSettings {
    /// Whether `--exclude-compressed` skips `input`: when compressing (not
    /// listing or training, which zstd does on every file), a file whose name
    /// says it is compressed already. As zstd, it is skipped silently and
    /// does not count as a failure.
    func isExcluded(_ input: String) -> Bool {
        inputPolicy.excludesCompressed && operation == .compress && input != "-"
            && CompressedName.matches(input)
    }

    /// Whether `-r` leaves out `input`, silently: when compressing beside
    /// each input into zstd files, without `-f` or `--no-resume`, a `NAME.zst`
    /// that is the finished compression of a file `NAME` beside it (the
    /// checks of ``isFinished(_:of:_:)``; with `-D`, whose dictionary is not
    /// read yet, its modification time alone, which weir and zstd copy to
    /// their outputs) is that file's output, not an input: a run stopped
    /// half-way, run again, then skips it where zstd would write
    /// `NAME.zst.zst`. Files that only share a time (a tree from one
    /// reproducible tarball) stay inputs.
    func isOutputOfInput(_ input: String) -> Bool {
        let suffix = CompressedFormat.zstd.suffix
        guard operation == .compress, compressionSettings.format == .zstd, !outputPolicy.force,
              outputPolicy.resumes, outputPolicy.file == nil, !outputPolicy.standardOutputRequested,
              outputPolicy.flatFolder == nil, outputPolicy.mirrorRoot == nil,
              input.hasSuffix(suffix), input.count > suffix.count,
              let status = FileStatus.of(path: input), status.isRegularFile,
              let source = FileStatus.of(path: String(input.dropLast(suffix.count))), source.isRegularFile
        else { return false }
        guard dictionarySettings.file == nil else {
            return status.modificationTime.tv_sec == source.modificationTime.tv_sec
                && status.modificationTime.tv_nsec == source.modificationTime.tv_nsec
        }
        return FinishedOutput.isCompression(input, of: source, dictionary: nil)
    }

    /// Whether the result of `input` goes to standard output: asked for, or
    /// standard input with no `-o FILE`. A test writes nothing.
    func writesToStandardOutput(_ input: String) -> Bool {
        operationKind != .test && (outputPolicy.standardOutputRequested || (input == "-" && outputPolicy.file == nil))
    }

    /// The job for one input, after the safety checks that depend on flags.
    ///
    /// - Parameters:
    ///   - shared: the one output several inputs are written into, in turn.
    ///   - asking: whether an existing output may be asked about (zstd's
    ///     `overwrite (y/n) ?`, unless `-q`) or skipped when it is already
    ///     the input's finished compression; false when only the names matter.
    func makeJob(for input: String, dictionary: ZstdDictionary? = nil, compression: CompressionOptions? = nil,
                 patch: PatchReference? = nil,
                 console: Console, shared: OutputFile? = nil, asking: Bool = false) throws(WeirError) -> FileJob {
        let name = input == "-" ? "(stdin)" : input
        let toStandardOutput = writesToStandardOutput(input)
        var operation: FileJob.Operation = switch operationKind {
        case .test: .test(decompressionOptions(toStandardOutput: toStandardOutput, dictionary: dictionary))
        case .decompress: .decompress(decompressionOptions(toStandardOutput: toStandardOutput, dictionary: dictionary,
                                                           appending: shared != nil))
        case .compress:
            .compress(soleFrameStreamed(compression ?? compressionOptions(level: resolvedLevel(console: console),
                                                                          dictionary: dictionary), input: input))
        }
        // --patch-from: one frame against the old file, neither resumed nor split.
        if let patch {
            switch operation {
            case .compress(var options):
                options.patchReference = patch
                options.resumable = false
                operation = .compress(options)
            case .decompress(var options):
                options.patchReference = patch
                options.resumable = false
                operation = .decompress(options)
            case .test(var options):
                options.patchReference = patch
                operation = .test(options)
            }
        }
        let compressing = operationKind == .compress
        // As zstd: the dictionary is not also an input.
        if let dictionaryFile = dictionarySettings.file, input != "-",
            let inputStatus = FileStatus.of(path: input),
           let dictionaryStatus = FileStatus.of(path: dictionaryFile), inputStatus.isSameFile(as: dictionaryStatus) {
            throw WeirError.inputIsDictionary(path: name)
        }

        if input == "-", FileStatTrace.check("UTIL_isConsole(0)", { isatty(STDIN_FILENO) == 1 }), !outputPolicy.force {
            throw WeirError.terminalInput(path: name, compressing: compressing)
        }
        let destination: FileJob.Destination
        if operationKind == .test {
            destination = .none
        } else if let shared, outputPolicy.file != nil {
            destination = .shared(shared.descriptor)
        } else if toStandardOutput {
            if compressing, FileStatTrace.check("UTIL_isConsole(1)", { isatty(STDOUT_FILENO) == 1 }),
               !outputPolicy.toStdout, !outputPolicy.force {
                throw WeirError.terminalOutput()
            }
            destination = .standardOutput
        } else if let outputFile = outputPolicy.file {
            destination = .file(outputFile)
        } else if compressing {
            destination = .file(
                try placed(
                    OutputName.compressed(for: input, suffix: compressionSettings.format.suffix), input: input))
        } else if !RemoteInputs.isURL(input) {
            destination = .file(try placed(try OutputName.decompressed(for: input), input: input))
        } else {
            // A URL's output is named from the object's name, in the current
            // folder; a URL whose path has no last part names nothing (never its query).
            guard let object = RemoteInputs.objectName(input) else { throw WeirError.unnamedObject(url: input) }
            do {
                destination = .file(try placed(try OutputName.decompressed(for: object), input: input))
            } catch var error {
                // The message names the URL the user gave, not the name taken from it.
                if error.path == object { error.path = input }
                throw error
            }
        }
        // Compared as scalars: `==` on Strings would call two spellings of
        // "é" equal, which are two names.
        if case .file(let path) = destination, path.unicodeScalars.elementsEqual(input.unicodeScalars) {
            throw WeirError.sameFile(path: name)
        }
        if asking, case .compress(let options) = operation, case .file(let path) = destination,
           isFinished(path, of: input, options) {
            throw WeirError.alreadyCompressed(path: name, output: path, keepsInput: outputPolicy.removesInput)
        }
        var force = outputPolicy.force
        // Under --progress=json stderr is a stream of JSON objects: no question in it; refused, as -q refuses.
        if asking, !force, case .file(let path) = destination, reporting.quiet == 0, !reporting.progressJSON,
           FileStatTrace.check("UTIL_isRegularFile(\(FileName.displayed(path)))", {
               FileStatus.of(path: path)?.isRegularFile == true }) {
            guard Confirmation.ask("weir: \(FileName.displayed(path)): already exists; overwrite (y/n) ? ",
                                   stdinIsInput: input == "-" || inputPolicy.files.contains("-")) else {
                throw WeirError(.outputExists, path: path, operation: .create, reason: "not overwritten")
            }
            force = true
        }
        let removes: Bool = switch destination {
        case .file: outputPolicy.removesInput && input != "-" && !RemoteInputs.isURL(input)
        case .standardOutput, .shared, .none: false
        }
        return FileJob(input: input, operation: operation, destination: destination, force: force, removeInput: removes)
    }

    /// Whether `output` exists and is already the finished compression of
    /// `input` (``FinishedOutput``), which the same `-r` run again skips
    /// rather than refuses (a tree stopped half-way, then run again): where
    /// a stopped output would be resumed, a zstd file, without `-f` (which
    /// compresses again) or `--no-resume` (zstd's behaviour). A file named
    /// without -r is refused as zstd refuses it: a script may test that.
    func isFinished(_ output: String, of input: String, _ options: CompressionOptions) -> Bool {
        guard inputPolicy.recursive, !outputPolicy.force, options.resumable, options.format == .zstd, input != "-",
              let status = FileStatus.of(path: input) else { return false }
        return FinishedOutput.isCompression(output, of: status, dictionary: options.dictionary)
    }

    /// `options` for `input`: standard input that makes a single frame is
    /// streamed as zstd streams it (no size declared, the level's window,
    /// tables for `--size-hint` if given), since zstd never asks its size;
    /// unless `--stream-size` gives the size, which zstd then declares.
    func soleFrameStreamed(_ options: CompressionOptions, input: String) -> CompressionOptions {
        var options = options
        options.streamsSoleFrame = input == "-" && compressionSettings.streamSize == nil
        options.streamedSizeHint = compressionSettings.sizeHint
        return options
    }

    /// The decompression options of the flags for an output that is, or is
    /// not, standard output. As zstd: pass-through by default when forced to
    /// standard output (-dcf); sparse by default when writing a file.
    /// An output several inputs are `appending` to has no holes either.
    /// Its workers and, without -M, its memory limit follow
    /// ``decompressionPlan(toStandardOutput:dictionary:appending:)``.
    func decompressionOptions(toStandardOutput: Bool, dictionary: ZstdDictionary?,
                              appending: Bool = false) -> DecompressionOptions {
        decompressionPlan(toStandardOutput: toStandardOutput, dictionary: dictionary, appending: appending).options
    }

    /// The decompression options of the flags, and the plan that chose
    /// their workers (and, without -M, their memory limit): -T as given,
    /// else the cores this process may use, fewer under a cgroup memory limit.
    func decompressionPlan(toStandardOutput: Bool, dictionary: ZstdDictionary?,
                           appending: Bool = false) -> (options: DecompressionOptions, plan: WorkerPlan) {
        // As zstd: without -M, --zstd=wlog=N sets the limit to 2^N.
        var options = DecompressionOptions(
            verifyChecksum: resourceSettings.verifiesChecksums,
            memoryLimit: resourceSettings.memory ?? compressionSettings.parameters?.windowLog.map { 1 << min($0, 31) },
            threads: resourceSettings.requestedThreads, mapInput: resourceSettings.mapsInput,
            passThrough: decompressionSettings.passThrough ?? (outputPolicy.force && toStandardOutput),
            sparse: decompressionSettings.sparse ?? !(toStandardOutput || appending),
            dictionary: dictionary, longWindowLog: dictionarySettings.long)
        // Every run of the command reads whole pieces (DispatchIOTuning).
        options.sizesReadBuffers = true
        options.resumable = outputPolicy.resumes
        #if WEIR_TEST_HOOKS
        // The tests' way to make a decompression slow enough to stop after a checkpoint (test builds only).
        options.frameDelayForTesting = getenv("WEIR_TEST_FRAME_DELAY").flatMap { Double(String(cString: $0)) }
        // The tests' way to slow a run, step by step, to watch its progress line.
        options.stepDelayForTesting = getenv("WEIR_TEST_STEP_DELAY").flatMap { Double(String(cString: $0)) }
        // The tests' way to stop a run after a step, to read its line at a known point.
        options.stepHoldForTesting = getenv("WEIR_TEST_STEP_HOLD").map { String(cString: $0) }
        // The tests' way to checkpoint sooner, so that a short run can be stopped after one.
        options.checkpointIntervalForTesting = getenv("WEIR_TEST_CHECKPOINT_INTERVAL")
            .flatMap { Double(String(cString: $0)) }.flatMap { $0 >= 0 ? $0 : nil }
        #endif
        return WorkerPlan.applied(to: options, cores: resourceSettings.countedCores)
    }
}
