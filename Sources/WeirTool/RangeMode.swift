import Dispatch
import Glibc
import Weir
import WeirCLI
import WeirFiles
import WeirRemote

/// `-d --range=LIST` and `-t --range=LIST`: bytes of the decompressed
/// content of one input (``RangeExtraction``).
struct RangeMode {
    /// The run's resolved flags: what it reads are the lists of `--range`,
    /// -t, -D, `--patch-from`, the decompression options, -o, -f,
    /// `--no-sync`, -v and `--json`.
    let settings: RunSettings
    /// The inputs named: one, a file, a URL or `-`.
    let inputs: [String]
    let console: Console

    /// Writes (or, with -t, decodes) the ranges of the one input; returns the
    /// exit status.
    func run() -> Int32 {
        guard inputs.count == 1, let input = inputs.first else {
            console.error("--range reads one input, not \(inputs.count)")
            return 1
        }
        // Validated already (WeirCommand.validate): every list parses.
        guard let list = ByteRangeList(settings.decompressionSettings.ranges.joined(separator: ",")) else { return 1 }
        let ranges = list.items
        let (dictionary, unreadable) = settings.readDictionary(console: console)
        if unreadable { return 1 }
        let (patch, refused) = settings.readPatchReference(inputs, console: console)
        if refused { return 1 }
        var options = settings.decompressionOptions(toStandardOutput: true, dictionary: dictionary)
        // A patch's frame is decoded against the old file, as without --range.
        options.patchReference = patch
        let testing = settings.operation == .test
        let inputName = input == "-" ? "(stdin)" : input
        // The output: standard output unless -o FILE (a hidden temporary
        // file named FILE once complete, as every file weir writes); nothing
        // when testing.
        var file: OutputFile?
        if !testing, let path = settings.outputPolicy.file, path != "-" {
            do throws(WeirError) {
                file = try OutputFile(path: path, force: settings.outputPolicy.force)
            } catch {
                console.error(CommandHint.message(for: error))
                return 1
            }
        }
        let outputName = file?.path ?? "(stdout)"
        let output = testing ? nil : file?.descriptor ?? Descriptor(STDOUT_FILENO, path: outputName)
        let signals = SignalHandler(console: console)
        signals.install()
        defer { signals.uninstall() }
        // Under --progress=json, the records of the bytes of the ranges (their
        // sum is the total when every range has an end).
        let total = ranges.allSatisfy { $0.end != nil }
            ? ranges.reduce(0) { $0 + ($1.end ?? $1.start) - $1.start } : nil
        let observer = console.events
            ? console.progress?.begin(name: FileName.displayed(inputName), file: 1, files: 1, total: total,
                                      mode: testing ? .test : .decompress, jsonName: input)
            : nil
        let start = ResourceUsage.current()
        let began = DispatchTime.now().uptimeNanoseconds
        let outcome: RangeExtraction.Outcome
        do throws(WeirError) {
            let standardInput = input == "-" ? Descriptor(STDIN_FILENO, path: inputName) : nil
            // A file whose size is not its content's (procfs) is read as a stream.
            let isFile = standardInput == nil && (RemoteInputs.isURL(input)
                || FileStatus.of(path: input)?.isRegularFile == true && !InputKind.sizeIsUntrusted(path: input))
            if isFile {
                outcome = try RangeExtraction.file(path: input, ranges: ranges, options: options, output: output,
                                                   cancellation: signals.cancellation, observer: observer)
            } else {
                guard list.isAscending else {
                    console.progress?.end(status: .error)
                    console.error(
                        "\(FileName.displayed(inputName)): from a stream, the ranges must be in increasing order",
                        input: input)
                    return 1
                }
                let stream: Descriptor
                if let standardInput {
                    stream = standardInput
                } else {
                    do throws(WeirError) {
                        stream = try Descriptor.openForReading(input)
                    } catch {
                        console.progress?.end(status: .error)
                        console.error(CommandHint.message(for: error), input: input)
                        return 1
                    }
                }
                defer { if standardInput == nil { stream.close() } }
                outcome = try RangeExtraction.stream(input: stream, ranges: ranges, options: options, output: output,
                                                     cancellation: signals.cancellation, observer: observer)
            }
            try file?.commit(copying: nil, sync: settings.outputPolicy.syncs)
        } catch {
            file?.discard()
            if let signal = signals.received { return 128 + signal }
            console.progress?.end(status: .error)
            console.error(CommandHint.message(for: error), input: input)
            return 1
        }
        console.progress?.end(status: .ok)
        for warning in outcome.warnings { console.warning(warning, file: input) }
        if settings.reporting.json {
            var statistics = Statistics()
            statistics.bytesIn = outcome.bytesIn
            statistics.bytesOut = outcome.bytesOut
            statistics.frames = outcome.framesRead
            statistics.seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
            statistics = statistics.measuringUsage(since: start)
            console.json(JSONRecord(operation: testing ? .test : .decompress, input: input,
                                    output: testing ? nil : (file == nil ? "-" : outputName),
                                    statistics: statistics, level: nil, chunkBytes: nil))
        } else if settings.reporting.verbose > 0 {
            let frames = outcome.frames.map { " of \($0)" } ?? ""
            console.write(
                "\(FileName.displayed(inputName)): \(outcome.bytesOut) bytes in \(ranges.count) range"
                    + "\(ranges.count == 1 ? "" : "s"), "
                    + "\(outcome.framesRead) frame\(outcome.framesRead == 1 ? "" : "s")"
                    + "\(frames) read\n")
        }
        return 0
    }
}
