import ArgumentParser
import Foundation
import Weir
#if canImport(Glibc)
import Glibc
#endif

/// The `weir` command: flags in, library calls, exit status out.
@main
struct WeirCommand: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "weir",
        abstract: "Compress and decompress files and pipes with zstd, in parallel.",
        discussion: """
        With no FILE, or when FILE is -, reads standard input and writes standard output.
        Output is standard zstd (many independent frames) that zstd -d decodes.
        Levels: -1 ... -19 (default 3), --ultra -20 ... -22, --fast[=N].
        Sizes accept K, KB, KiB, M, MB, MiB, G, GB, GiB.
        Exit status: 0 on success, 1 if any file failed, 128+N after signal N.
        """,
        helpNames: [.short, .long]
    )

    // MARK: Operation

    @Flag(name: [.customShort("z"), .customLong("compress")], help: "Compress (the default).")
    var compress = false

    @Flag(name: [.short, .long], help: "Decompress.")
    var decompress = false

    @Flag(name: [.short, .long], help: "Test compressed files: decompress, verify, write nothing.")
    var test = false

    // MARK: Output

    @Flag(name: [.customShort("c"), .customLong("stdout")], help: "Write to standard output.")
    var toStdout = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write the result to FILE (one input only).", valueName: "FILE"))
    var output: String?

    @Flag(name: [.short, .long], help: "Overwrite existing files; read or write compressed data on a terminal.")
    var force = false

    @Flag(name: [.short, .long], help: "Keep the input files (the default).")
    var keep = false

    @Flag(name: .customLong("rm"), help: "Remove each input file after it was processed successfully.")
    var removeInput = false

    // MARK: Compression

    @Option(name: .customLong("level"), help: .hidden)
    var level: Int?

    @Flag(name: .customLong("ultra"), help: "Allow levels 20 to 22 (more memory).")
    var ultra = false

    @Option(name: .customLong("fast"), help: ArgumentHelp("Faster, negative levels: --fast[=N], N >= 1 (default 1).", valueName: "N"))
    var fast: Int?

    @Option(name: [.customShort("T"), .customLong("threads")], help: ArgumentHelp("Worker threads; 0 means one per core (default).", valueName: "N"))
    var threads: Int = 0

    @Option(name: .customLong("chunk-size"), help: ArgumentHelp("Input bytes per independent frame (default 8MiB).", valueName: "SIZE"))
    var chunkSize: ByteCount = ByteCount(bytes: CompressionOptions.defaultChunkSize)

    @Flag(inversion: .prefixedNo, help: "Write (compress) or verify (decompress) content checksums (default: on).")
    var check = true

    @Option(name: [.customShort("M"), .customLong("memory")], help: ArgumentHelp("Largest window a frame may use when decompressing (default 128MiB).", valueName: "SIZE"))
    var memory: ByteCount?

    // MARK: Messages

    @Flag(name: [.short, .long], help: "Quieter: no summary; twice: no warnings either.")
    var quiet: Int

    @Flag(name: [.short, .long], help: "More verbose.")
    var verbose: Int

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the version of weir and of libzstd.")
    var showVersion = false

    @Flag(name: .customLong("stdout-wins"), help: .hidden)
    var stdoutWins = false

    @Argument(help: ArgumentHelp("Files to process; - is standard input.", valueName: "FILE"))
    var files: [String] = []

    // MARK: Entry point

    static func main() {
        let arguments = ArgumentNormalizer.normalize(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try parseAsRoot(arguments)
            if var weir = command as? WeirCommand {
                let status = weir.execute()
                Foundation.exit(status)
            }
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    mutating func validate() throws {
        if [compress, decompress, test].filter({ $0 }).count > 1 {
            throw ValidationError("Choose one of -z/--compress, -d/--decompress and -t/--test.")
        }
        if let fast, fast < 1 {
            throw ValidationError("--fast=\(fast): the value must be 1 or more.")
        }
        if threads < 0 || threads > 256 {
            throw ValidationError("-T \(threads): the number of threads must be between 0 and 256.")
        }
        if chunkSize.bytes < 1024 || chunkSize.bytes > 1 << 30 {
            throw ValidationError("--chunk-size \(chunkSize.bytes): the chunk size must be between 1KiB and 1GiB.")
        }
        if output != nil, files.count > 1, !(toStdout && stdoutWins) {
            throw ValidationError("-o names one output: give one input file, or use -c.")
        }
        if let level, level < 0 {
            throw ValidationError("--level \(level): use --fast=N for negative levels.")
        }
    }

    /// Runs every job; returns the exit status.
    mutating func execute() -> Int32 {
        if showVersion {
            print("weir \(Self.version) (libzstd \(Zstd.libraryVersion))")
            return 0
        }
        let console = Console(quietness: quiet, verbosity: verbose)
        let signals = SignalHandler(console: console)
        signals.install()
        let inputs = files.isEmpty ? ["-"] : files
        var failed = false
        for input in inputs {
            if signals.cancellation.isCancelled { break }
            do throws(WeirError) {
                let job = try makeJob(for: input, console: console)
                let statistics = try job.run(cancellation: signals.cancellation)
                console.summary(job: job, statistics: statistics, level: resolvedLevel(console: nil))
            } catch {
                if signals.cancellation.isCancelled { break }
                failed = true
                if !error.isBrokenPipe || quiet == 0 {
                    console.error(error.description)
                }
            }
        }
        signals.uninstall()
        if let signal = signals.received { return 128 + signal }
        return failed ? 1 : 0
    }

    /// The compression level after `--fast`, `--ultra` and clamping.
    func resolvedLevel(console: Console?) -> Int {
        if let fast { return -min(fast, -Zstd.minLevel) }
        let requested = level ?? Zstd.defaultLevel
        let maximum = ultra ? Zstd.maxLevel : 19
        if requested > maximum {
            console?.warning("compression level \(requested) is above the maximum \(maximum)\(ultra ? "" : " without --ultra"); using \(maximum)")
            return maximum
        }
        return requested
    }

    /// The job for one input, after the safety checks that depend on flags.
    func makeJob(for input: String, console: Console) throws(WeirError) -> FileJob {
        let name = input == "-" ? "(stdin)" : input
        let toStandardOutput = (toStdout && (output == nil || stdoutWins)) || (input == "-" && output == nil)
        let operation: FileJob.Operation
        let decompressOptions = DecompressionOptions(verifyChecksum: check, memoryLimit: memory?.bytes)
        if test {
            operation = .test(decompressOptions)
        } else if decompress {
            operation = .decompress(decompressOptions)
        } else {
            operation = .compress(CompressionOptions(level: resolvedLevel(console: console), threads: threads,
                                                     chunkSize: chunkSize.bytes, checksum: check))
        }
        let compressing = !test && !decompress

        if input == "-", isatty(STDIN_FILENO) == 1, !force {
            throw WeirError(.terminal, path: name, operation: "read",
                            reason: compressing ? "stdin is a terminal, aborting (use -f to read it anyway)"
                                                : "will not read compressed data from a terminal (use -f to force)")
        }
        let destination: FileJob.Destination
        if test {
            destination = .none
        } else if toStandardOutput {
            if compressing, isatty(STDOUT_FILENO) == 1, !toStdout, !force {
                throw WeirError(.terminal, path: "(stdout)", operation: "write",
                                reason: "stdout is a terminal, aborting: will not write compressed data to it (use -c or -f to force)")
            }
            destination = .standardOutput
        } else if let output {
            destination = .file(output)
        } else if compressing {
            destination = .file(OutputName.compressed(for: input))
        } else {
            destination = .file(try OutputName.decompressed(for: input))
        }
        if case .file(let path) = destination, path == input {
            throw WeirError(.sameFile, path: name, operation: "create", reason: "output is the input file")
        }
        return FileJob(input: input, operation: operation, destination: destination, force: force,
                       removeInput: removeInput && input != "-" && destination != .standardOutput)
    }
}
