import Weir
import WeirCLI

/// `weir --index FILE...`: a seek table appended to each multi-frame file
/// that lacks one covering it (``SeekTableAppender``). A file another
/// `--index` holds is waited for, with a line saying so (hidden by -q).
struct IndexMode {
    /// The run's resolved flags: what it reads are -D and the decompression
    /// options, the level the index is compressed at, `--index-from`,
    /// `--no-member-index`, `--no-sync` and -q.
    let settings: RunSettings
    /// The files to index, in the order given.
    let inputs: [String]
    let console: Console

    /// Indexes every input in turn, one line each on stderr (hidden by -q);
    /// returns the exit status (1 if any failed).
    func run() -> Int32 {
        if inputs.isEmpty || inputs.contains("-") {
            console.error("--index appends to files in place: it does not read standard input")
            return 1
        }
        let (dictionary, unreadable) = settings.readDictionary(console: console)
        if unreadable { return 1 }
        let options = settings.decompressionOptions(toStandardOutput: false, dictionary: dictionary)
        // The index compressed as a compression at the same level flags compresses its own.
        let level = settings.compressionSettings.levelPolicy.resolved.level
        let source = settings.compressionSettings.indexSource
        var failed = false
        // Ctrl-C stops the run between files, or the decode in hand; an append under way ends whole or is
        // undone first, whatever the signals: a second one does not exit at once here.
        let signals = SignalHandler(console: console, exitsOnSecondSignal: false)
        signals.install()
        defer { signals.uninstall() }
        for input in inputs {
            if signals.received != nil { break }
            do throws(WeirError) {
                let name = FileName.displayed(input)
                // Another --index on the file: wait for it (then the file
                // is indexed and this run changes nothing), saying so.
                let outcome = try SeekTableAppender.index(path: input, options: options,
                                                          memberIndex: settings.compressionSettings.memberIndex,
                                                          level: level, tarSource: source,
                                                          synchronous: settings.outputPolicy.syncs,
                                                          cancellation: signals.cancellation) {
                    guard settings.reporting.quiet == 0 else { return }
                    console.write("\(name): is busy (another weir --index?), waiting for it\n")
                }
                guard settings.reporting.quiet == 0 else { continue }
                switch outcome {
                case .alreadyIndexed(let frames):
                    console.write("\(name): already seekable (its seek table lists \(frames) frames, skippable ones "
                                  + "included), unchanged\n")
                case .appended(let frames, let bytes, let measured):
                    let decoded = measured == 0 ? "" : measured == 1 ? "; 1 frame decoded to measure it"
                        : "; \(measured) frames decoded to measure them"
                    console.write("\(name): seek table of \(frames) frames (skippable ones included) appended "
                                  + "(\(bytes) bytes\(decoded))\n")
                case .appendedMembers(let members, let frames, let bytes):
                    let how = source.map { "the headers read from \(FileName.displayed($0))" }
                        ?? "the content decoded once"
                    console.write("\(name): member index of \(members) members and seek table of \(frames) frames "
                                  + "(skippable ones included) appended (\(bytes) bytes; \(how))\n")
                }
            } catch {
                failed = true
                if signals.received == nil { console.error(CommandHint.message(for: error)) }
            }
        }
        if let number = signals.received { return 128 + number }
        return failed ? 1 : 0
    }
}
