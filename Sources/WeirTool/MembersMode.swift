import Glibc
import Weir
import WeirFiles
import WeirCLI
import WeirRemote

/// `weir -l --members ARCHIVE...` and `weir -d --member=PATTERN ARCHIVE`:
/// a `.tar.zst`'s members listed from its member index, or written as a tar
/// stream (``TarMemberExtraction``): from a file through the index, from a
/// pipe as the stream passes.
struct MembersMode {
    /// `--members` and `--member`.
    struct Settings: Sendable {
        /// `-l --members`: the members listed from the member index.
        var listsMembers = false
        /// `--member=PATTERN`, in the order given.
        var patterns: [String] = []

        /// Whether the flags ask for a run of this mode (they are checked
        /// together in ``WeirCommand/validateMembers()``).
        var isAsked: Bool { listsMembers || !patterns.isEmpty }
    }

    /// The run's resolved flags: what it reads are its own (``Settings``),
    /// -D, the decompression options, -o, -f, `--no-sync`, -q and -v.
    let settings: RunSettings
    /// The archives named (`--member` reads one, a file, a URL or `-`).
    let inputs: [String]
    let console: Console

    /// Runs `--members` or `--member`; returns the exit status.
    func run() -> Int32 {
        settings.memberSettings.listsMembers ? listMembers() : extractMembers()
    }

    /// Prints the members of every input as `tar tf` (with -v `tar tvf`)
    /// does; returns the exit status (1 if any failed).
    private func listMembers() -> Int32 {
        if inputs.isEmpty || inputs.contains("-") {
            console.error("--members reads the member index at the end of a file: it does not read standard input")
            return 1
        }
        var listing = TarListing(verbose: settings.reporting.verbose > 0, utf8: Self.localeIsUTF8)
        var failed = false
        for input in inputs {
            do throws(WeirError) {
                let archive = try TarArchive(path: input)
                // Written a chunk at a time: the lines are never all in memory.
                var output: [UInt8] = []
                output.reserveCapacity(Self.listingChunk + 4096)
                // The first failed write's errno, taken at once; nothing is formatted after it.
                var writeError: Int32?
                try archive.records.forEachRecord { record in
                    guard writeError == nil else { return }
                    listing.append(record, to: &output)
                    if output.count >= Self.listingChunk {
                        if !Self.writeStandardOutput(output) { writeError = errno }
                        output.removeAll(keepingCapacity: true)
                    }
                }
                if writeError == nil, !Self.writeStandardOutput(output) { writeError = errno }
                if let writeError {
                    console.error("(stdout): write failed: \(String(cString: strerror(writeError)))")
                    return 1
                }
                if archive.endedEarly, settings.reporting.quiet == 0 {
                    console.warning("the tar archive ends early (no end blocks, or a member cut short)", file: input)
                }
            } catch {
                failed = true
                console.error(CommandHint.message(for: error), input: input)
            }
        }
        return failed ? 1 : 0
    }

    /// Writes the tar stream of the members `--member` selects; returns the
    /// exit status: 1 when a pattern matched nothing (the others written,
    /// as tar does) or on any error.
    private func extractMembers() -> Int32 {
        guard inputs.count == 1, let input = inputs.first else {
            console.error("--member reads one archive, not \(inputs.count)")
            return 1
        }
        let (dictionary, unreadable) = settings.readDictionary(console: console)
        if unreadable { return 1 }
        let options = settings.decompressionOptions(toStandardOutput: true, dictionary: dictionary)
        var file: OutputFile?
        if let path = settings.outputPolicy.file, path != "-" {
            do throws(WeirError) {
                file = try OutputFile(path: path, force: settings.outputPolicy.force)
            } catch {
                console.error(CommandHint.message(for: error))
                return 1
            }
        }
        let output = file?.descriptor ?? Descriptor(STDOUT_FILENO, path: "(stdout)")
        let signals = SignalHandler(console: console)
        signals.install()
        defer { signals.uninstall() }
        let patterns = settings.memberSettings.patterns.map { TarMemberPattern($0) }
        let outcome: TarMemberExtraction.Outcome
        do throws(WeirError) {
            // A regular file through its member index; anything else (a pipe) decoded as it comes.
            if input != "-", RemoteInputs.isURL(input) || FileStatus.of(path: input)?.isRegularFile == true {
                outcome = try TarMemberExtraction.file(path: input, patterns: patterns, options: options,
                                                       output: output, cancellation: signals.cancellation)
            } else {
                let standardInput = input == "-" ? Descriptor(STDIN_FILENO, path: "(stdin)") : nil
                let stream = if let standardInput { standardInput } else { try Descriptor.openForReading(input) }
                defer { if standardInput == nil { stream.close() } }
                outcome = try TarMemberExtraction.stream(input: stream, patterns: patterns, options: options,
                                                         output: output, cancellation: signals.cancellation)
            }
            try file?.commit(copying: nil, sync: settings.outputPolicy.syncs)
        } catch {
            file?.discard()
            if let signal = signals.received { return 128 + signal }
            console.error(CommandHint.message(for: error), input: input)
            return 1
        }
        for link in outcome.missedLinkTargets {
            console.warning("hard link target \(String(decoding: link, as: UTF8.self)) was not selected "
                                + "before its link: tar x cannot make the link (select it too)",
                            file: input == "-" ? "(stdin)" : input, input: input)
        }
        for link in outcome.linksToLaterMembers {
            let path = String(decoding: link.path, as: UTF8.self)
            let target = String(decoding: link.target, as: UTF8.self)
            console.warning("hard link \(path) links to \(target), which comes after it in the archive: tar x "
                                + "cannot make the link (from the whole archive either), and weir does not bring it",
                            file: input, input: input)
        }
        // tar's words: "tar: NAME: Not found in archive".
        let shown = FileName.displayed(input == "-" ? "(stdin)" : input)
        for pattern in outcome.unmatched {
            console.error("\(shown): \(String(decoding: pattern.text, as: UTF8.self)): Not found in archive",
                          input: input)
        }
        if settings.reporting.verbose > 0, !settings.reporting.json {
            console.write("\(shown): \(outcome.members) member\(outcome.members == 1 ? "" : "s"), "
                              + "\(outcome.bytesOut) bytes, \(outcome.framesRead) frame"
                              + "\(outcome.framesRead == 1 ? "" : "s") decoded\n")
        }
        return outcome.unmatched.isEmpty ? 0 : 1
    }

    /// How many bytes of a listing are gathered before they are written.
    static let listingChunk = 256 << 10

    /// Whether names print as in a UTF-8 locale (tar's quoting of bytes
    /// above 127): LC_ALL, else LC_CTYPE, else LANG names a UTF-8 codeset.
    static var localeIsUTF8: Bool {
        let name = ["LC_ALL", "LC_CTYPE", "LANG"].lazy
            .compactMap { (variable: String) -> String? in getenv(variable).map { String(cString: $0) } }
            .first { !$0.isEmpty } ?? ""
        let lowered = name.lowercased()
        return lowered.contains("utf-8") || lowered.contains("utf8")
    }

    /// Writes `bytes` to standard output whole; false (errno set) on failure.
    static func writeStandardOutput(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { all in
            guard let base = all.baseAddress else { return true }  // nothing to write
            var from = 0
            while from < all.count {
                let wrote = write(STDOUT_FILENO, base + from, all.count - from)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                from += wrote
            }
            return true
        }
    }
}
