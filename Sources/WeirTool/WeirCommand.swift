import ArgumentParser
import CAllocator
import Glibc
import Weir
import WeirCLI
import WeirRemote

/// The `weir` command: flags in, library calls, exit status out.
@main
struct WeirCommand: ParsableCommand {
    static let version = "0.1.0"

    /// ", jemalloc X.Y.Z" when jemalloc serves this process's memory (see
    /// CAllocator), empty when another allocator does (a sanitizer's).
    static var allocatorNote: String {
        guard let version = weir_allocator_version() else { return "" }
        // Its bytes up to "-", without walking Characters: grapheme breaking
        // alone touched ~0.3 MB of the runtime's pages for `--version`.
        return ", jemalloc " + String(decoding: UnsafeRawBufferPointer(start: version, count: strcspn(version, "-")),
                                      as: UTF8.self)
    }

    /// What `-V` prints.
    static var versionLine: String {
        "weir \(version) (libzstd \(Zstd.libraryVersion)\(allocatorNote))"
    }

    static let configuration = CommandConfiguration(
        commandName: "weir",
        abstract: "Compress and decompress files and pipes with zstd, in parallel.",
        discussion: """
        With no FILE, or when FILE is -, reads standard input and writes standard output.
        Output is standard zstd (many independent frames) that zstd -d decodes.
        Levels: -1 ... -19 (default 3), --ultra -20 ... -22, --fast[=N].
        Sizes accept K, KB, KiB, M, MB, MiB, G, GB, GiB.
        Exit status: 0 on success, 1 if any file failed or on a usage error,
        14 when training has too few samples (as zstd), 128+N after signal N.
        Environment: WEIR_CLEVEL (level), WEIR_NBTHREADS (threads); flags win.
        weir mount ARCHIVE MOUNTPOINT shows a .tar.zst as a read-only folder (weir mount --help).
        An http:// or https:// URL is an input of -l, -l --members, -d --member and
        --range (range requests: the archive's end, then the frames read), and of -d,
        -dc and -t (the body streamed); failures that may pass are retried; TLS is
        verified (CURL_CA_BUNDLE; proxies from the environment). See docs/remote.md.
        unweir is weir -d, weircat is weir -dc --pass-through; linked as zstd,
        unzstd, zstdcat, zcat or zstdmt, weir acts as zstd does under that name
        (and reads ZSTD_CLEVEL, ZSTD_NBTHREADS). See man weir.
        """,
        helpNames: [.short, .long, .customShort("H")]
    )

    // The flags, in the groups --help shows: WeirCommand+Options.swift.

    @OptionGroup(title: "Operation")
    var operationFlags: OperationFlags

    @OptionGroup(title: "Output")
    var outputFlags: OutputFlags

    @OptionGroup(title: "Compression")
    var compressionFlags: CompressionFlags

    @OptionGroup(title: "Decompression")
    var decompressionFlags: DecompressionFlags

    @OptionGroup(title: "Tar members")
    var memberFlags: MemberFlags

    @OptionGroup(title: "Dictionaries and long-distance matching")
    var dictionaryFlags: DictionaryFlags

    @OptionGroup(title: "Threads, checksums and memory")
    var resourceFlags: ResourceFlags

    @OptionGroup(title: "Messages")
    var messageFlags: MessageFlags

    @OptionGroup(title: "Benchmark")
    var benchmarkFlags: BenchmarkFlags

    @Argument(help: ArgumentHelp("Files to process; - is standard input.", valueName: "FILE"))
    var files: [String] = []

    /// What the parser cannot read (ArgumentNormalizer), set after parsing.
    var facts = CommandLineFacts()

    // The parsed properties: `facts` is not one of them.
    enum CodingKeys: CodingKey {
        case operationFlags, outputFlags, compressionFlags, decompressionFlags, memberFlags, dictionaryFlags,
             resourceFlags, messageFlags, benchmarkFlags, files
    }

    // MARK: Entry point

    static func main() {
        #if WEIR_TEST_HOOKS
        ProcessTestHooks.install()
        #endif
        // libzstd's advanced API is fixed only within one version.
        do throws(WeirError) {
            try Zstd.checkLibraryVersion(path: "weir", operation: .run)
        } catch {
            StandardError.write("weir: \(error.reason)\n")
            Glibc.exit(1)
        }
        // `weir mount ARCHIVE MOUNTPOINT` is a command of its own (MountCommand),
        // picked by its first word here rather than as the parser's subcommand:
        // it forks before any thread starts (the URL loader's below would) and
        // takes none of the environment's arguments (WEIR_CLEVEL's), and the
        // parser, whose root takes FILE arguments, would read `mount` as a file.
        if CommandLine.argc > 1, let first = CommandLine.unsafeArgv[1], strcmp(first, "mount") == 0 {
            MountCommand.start(Array(ArgumentBytes.arguments().dropFirst(2)))
        }
        // A URL among the arguments: libcurl loads while the rest starts.
        RemoteInputs.startLoadingClient(ifAnyOf: UnsafeBufferPointer(start: CommandLine.unsafeArgv,
                                                                     count: Int(CommandLine.argc)))
        // `weir --version` alone touches none of the parser's pages nor the
        // stdlib's string handling (docs/design.md, "Start-up"); the parsed
        // flag prints the same line.
        if Invocation.asksVersionAlone {
            print(versionLine)
            Glibc.exit(0)
        }
        // The program name (unweir, weircat) and WEIR_CLEVEL/WEIR_NBTHREADS
        // add arguments before the command line's own, which are read as
        // bytes: a name that is not UTF-8 stays the name it is (FileName).
        let invocation = Invocation(commandLine: ArgumentBytes.arguments(), environment: Invocation.environment())
        // Many small outputs are synced in groups, each file kept open until
        // its group's sync: the more descriptors, the fewer syncs (CommitQueue).
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = min(limit.rlim_max, 1 << 16)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        let arguments = invocation.arguments
        // A part read of one file (--range, --member) skips the parser: its
        // settings are made from a closed grammar (PartReadShortcut).
        if let settings = PartReadShortcut.settings(arguments, facts: invocation.facts) {
            #if WEIR_TEST_HOOKS
            PartReadShortcut.checkAgainstParser(settings, arguments, facts: invocation.facts)
            #endif
            invocation.reportWarnings(quietness: settings.reporting.quiet)
            Glibc.exit(settings.execute())
        }
        do {
            var command = try parseAsRoot(arguments)
            if var weir = command as? WeirCommand {
                weir.facts = invocation.facts
                try weir.validateFacts()
                invocation.reportWarnings(quietness: weir.messageFlags.quiet)
                let status = weir.settings.execute()
                Glibc.exit(status)
            }
            try command.run()
        } catch {
            // A usage error exits with 1, as zstd's do (ArgumentParser would
            // use 64); help, version and completion scripts keep 0.
            if exitCode(for: error).isSuccess { exit(withError: error) }
            // ArgumentParser quotes arguments as given: show their bytes that
            // are not UTF-8 as \xFF, as every other message does.
            StandardError.write(FileName.displayingEscapes(fullMessage(for: error)) + "\n")
            Glibc.exit(1)
        }
    }
}
