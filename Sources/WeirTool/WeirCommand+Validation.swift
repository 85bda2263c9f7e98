import ArgumentParser
import Weir
import WeirCLI

/// The checks of the command line that the parser cannot make: values in
/// range, flags that cannot go together. A failure is a usage error (exit 1).
extension WeirCommand {
    mutating func validate() throws {
        let training = operationFlags.operation.isTraining
        try validateMembers()
        if let long = dictionaryFlags.long, !CompressionOptions.longWindowLogs.contains(long) {
            let logs = CompressionOptions.longWindowLogs
            throw ValidationError(
                "--long=\(long): the window log must be between \(logs.lowerBound) and \(logs.upperBound).")
        }
        try validateTraining()
        // As zstd (zstdcli.c): a patch's old file is one file, not a dictionary too.
        if let patchFrom = dictionaryFlags.patchFrom {
            if dictionaryFlags.dictionaryFile != nil {
                throw ValidationError("can't use -D and --patch-from=\(patchFrom) at the same time.")
            }
            if patchFrom == "-" || patchFrom.isEmpty {
                throw ValidationError("--patch-from=\(patchFrom): the old file must be a file, not standard input.")
            }
        }
        if let fast = compressionFlags.fast, fast < 1 {
            throw ValidationError("--fast=\(fast): the value must be 1 or more.")
        }
        // As zstd: a level past 32 bits is refused, not clamped.
        if let level = compressionFlags.level, level > Int(UInt32.max) {
            throw ValidationError("-\(level): the numeric value overflows a 32-bit unsigned int.")
        }
        if let fast = compressionFlags.fast, fast > Int(UInt32.max) {
            throw ValidationError("--fast=\(fast): the numeric value overflows a 32-bit unsigned int.")
        }
        let threads = resourceFlags.resolvedThreads
        if threads < 0 || threads > 256 {
            throw ValidationError("-T \(threads): the number of threads must be between 0 and 256.")
        }
        // Training cuts samples of -B bytes instead (validateTraining).
        if !training, let chunkSize = compressionFlags.chunkSize?.bytes, chunkSize < 1024 || chunkSize > 1 << 30 {
            throw ValidationError("--chunk-size \(chunkSize): the chunk size must be between 1KiB and 1GiB.")
        }
        if outputFlags.outputDirFlat == "" || outputFlags.outputDirMirror == "" {
            throw ValidationError("the output folder cannot be an empty string (did you mean . ?)")
        }
        if let level = compressionFlags.level, level < 0 {
            throw ValidationError("--level \(level): use --fast=N for negative levels.")
        }
        if let format = compressionFlags.format, format != .zstd, resourceFlags.verify {
            throw ValidationError("--format=\(format.rawValue): --verify checks zstd frames only.")
        }
        guard let parameters = compressionFlags.parameters else {
            throw ValidationError("--zstd=\(compressionFlags.zstdParameters.joined(separator: ",")): not a list of "
                                  + "parameters (wlog=N,clog=N,... or windowLog=N,chainLog=N,...)")
        }
        do throws(WeirError) {
            try parameters.validate()
        } catch {
            // Named by the flag that set it: libzstd's targetCBlockSize is no --zstd= key.
            let flag = error.reason.hasPrefix("targetCBlockSize") ? "--target-compressed-block-size" : "--zstd"
            throw ValidationError("\(flag): \(error.reason)")
        }
        try validateIndexFrom()
        if operationFlags.operation == .index {
            if messageFlags.json {
                throw ValidationError("--json describes compressed or decompressed data; --index writes none.")
            }
            if outputFlags.toStdout || outputFlags.output != nil {
                throw ValidationError("--index appends to each FILE in place: it writes no other output (-c, -o).")
            }
        }
        if !decompressionFlags.ranges.isEmpty {
            guard operationFlags.operation == .decompress || operationFlags.operation == .test else {
                throw ValidationError("--range reads part of a compressed input: it goes with -d or -t.")
            }
            if let invalid = decompressionFlags.ranges.first(where: { ByteRangeList($0) == nil }) {
                throw ValidationError("--range=\(invalid): not a list of START:END, START:+LENGTH, START: or :END.")
            }
            if outputFlags.removeInput || operationFlags.recursive || outputFlags.outputDirFlat != nil
                || outputFlags.outputDirMirror != nil {
                throw ValidationError(
                    "--range reads one input to one output: it cannot go with --rm, -r or an output folder.")
            }
        }
        if let priority = benchmarkFlags.priority, priority != "rt" {
            throw ValidationError("--priority=\(priority): the only priority is rt.")
        }
        if let seconds = benchmarkFlags.seconds, seconds < 0 || seconds > Int(UInt32.max) {
            throw ValidationError("-i\(seconds): the seconds must be between 0 and \(UInt32.max).")
        }
        if resourceFlags.verify {
            switch operationFlags.operation {
            case .compress, .benchmark: break
            case .decompress, .test:
                if resourceFlags.check == false {
                    throw ValidationError(
                        "--verify checks what is decoded against the content checksums: it cannot go with --no-check.")
                }
            case .list, .index, .train, .trainCover, .trainFastCover, .trainLegacy:
                throw ValidationError("--verify checks compressed or decompressed data: it goes with -z, -d, -t or -b.")
            }
        }
        if compressionFlags.showDefaultCParams, operationFlags.operation != .compress {
            throw ValidationError(
                "--show-default-cparams shows compression parameters: it cannot go with -d, -t, -l or --train.")
        }
    }

    /// The checks of what the parser cannot read (``CommandLineFacts``),
    /// set after parsing; a failure is a usage error, as validate()'s.
    func validateFacts() throws {
        try validateTrainingLists()
        var range = Zstd.minLevel...Zstd.maxLevel
        for list in facts.adaptLists {
            guard let read = AdaptParameterList.parse(list, over: range) else {
                throw ValidationError("--adapt=\(list): not a list of min=N,max=N with min not above max.")
            }
            range = read
        }
        // zstd's rule (FIO_setAdaptiveMode): adapting needs its worker threads.
        if compressionFlags.adapt, resourceFlags.singleThread, operationFlags.operation == .compress {
            throw ValidationError(
                "--adapt cannot go with --single-thread: adaptive mode is not compatible with single thread mode.")
        }
    }

    /// `--index-from=TAR`: one file indexed, its members from TAR.
    func validateIndexFrom() throws {
        guard let tar = operationFlags.indexFrom else { return }
        guard operationFlags.operation == .index else {
            throw ValidationError(
                "--index-from=\(tar) gives the content of the file --index indexes: it goes with --index.")
        }
        if tar == "-" || tar.isEmpty {
            throw ValidationError("--index-from=\(tar): the tar must be a file, not standard input.")
        }
        if compressionFlags.noMemberIndex {
            throw ValidationError(
                "--index-from=\(tar) is read for the member index: it cannot go with --no-member-index.")
        }
        if files.count != 1 || operationFlags.recursive || !operationFlags.fileLists.isEmpty {
            throw ValidationError(
                "--index-from=\(tar) holds the content of one file: give --index exactly one FILE.")
        }
    }

    /// The flags that go with `--members` and `--member`.
    func validateMembers() throws {
        let operation = operationFlags.operation
        if memberFlags.listMembers, operation != .list {
            throw ValidationError("--members lists a .tar.zst's members: it goes with -l.")
        }
        if !memberFlags.patterns.isEmpty {
            guard operation == .decompress else {
                throw ValidationError("--member=PATTERN extracts members of a .tar.zst: it goes with -d.")
            }
            if !decompressionFlags.ranges.isEmpty {
                throw ValidationError("--member and --range each choose the bytes to write: give one of them.")
            }
            if outputFlags.removeInput || operationFlags.recursive || outputFlags.outputDirFlat != nil
                || outputFlags.outputDirMirror != nil {
                throw ValidationError(
                    "--member reads one archive to one output: it cannot go with --rm, -r or an output folder.")
            }
        }
    }
}
