import Foundation
import Testing

/// The part reads whose command line skips the parser (PartReadShortcut):
/// each gives what the same command read by the parser gives (`--` before
/// the file sends it there), byte for byte, with the same messages and
/// status. The debug and test builds also make the parser's settings of
/// every shortcut command line and stop with status 70 when they differ, so
/// each run here (and every other test of `--range` and `--member`) checks
/// that too.
@Suite("weir -d --range / --member without the parser")
struct PartReadShortcutCommandTests {
    /// The command `arguments` (FILE last) run as given and with `--`
    /// before FILE, which the shortcut does not take: the two results.
    func bothWays(_ arguments: [String], in scratch: Scratch) throws
        -> (shortcut: WeirProcess.Result, parsed: WeirProcess.Result) {
        let parsedArguments = arguments.dropLast() + ["--"] + arguments.suffix(1)
        return (try WeirProcess.run(arguments, in: scratch.url), try WeirProcess.run(Array(parsedArguments),
                                                                                        in: scratch.url))
    }

    @Test("ranges and members read through the shortcut are those the parser's command reads, errors included")
    func sameAsParsed() throws {
        let scratch = Scratch()
        try MembersCommandTests.archives(scratch, formats: ["pax"])
        let original = try Data(contentsOf: scratch.url.appendingPathComponent("pax.tar"))
        let commands: [[String]] = [
            ["-d", "-c", "--range=1000:+70000", "pax.tar.zst"],
            ["-d", "-c", "--no-check", "--range=0:10,65530:+20,:5", "pax.tar.zst"],
            ["--decompress", "--stdout", "--range=100:", "--range=7:9", "pax.tar.zst"],
            ["-d", "--range=5:+5", "pax.tar.zst"],
            ["-dc", "--range=0:\(original.count + 1)", "pax.tar.zst"],
            ["-d", "-c", "--member=tree/dir", "pax.tar.zst"],
            ["-d", "-c", "--no-check", "--member=tree/dir/f1.txt", "--member=tree/sparse.img", "pax.tar.zst"],
            ["-d", "-c", "--member=tree/dir/*.txt", "pax.tar.zst"],
            ["-d", "-c", "--member=tree/none", "pax.tar.zst"],
            ["-d", "-c", "--member=", "pax.tar.zst"],
            ["-d", "-c", "--range=0:10", "missing.zst"],
        ]
        for command in commands {
            let (shortcut, parsed) = try bothWays(command, in: scratch)
            #expect(shortcut.status != 70, "\(command): \(shortcut.stderr)")
            #expect(shortcut.status == parsed.status, "\(command)")
            #expect(shortcut.stdout == parsed.stdout, "\(command)")
            #expect(shortcut.stderr == parsed.stderr, "\(command)")
        }
        let range = try WeirProcess.run(["-d", "-c", "--range=1000:+70000", "pax.tar.zst"], in: scratch.url)
        #expect(range.status == 0)
        #expect(range.stdout == original[1000 ..< 71000])
    }

    @Test("command lines just outside its grammar are the parser's: its usage errors, exit 1")
    func outsideTheGrammar() throws {
        let scratch = Scratch()
        try MembersCommandTests.archives(scratch, formats: ["pax"])
        let refused: [([String], String)] = [
            (["-d", "-c", "--range=x", "pax.tar.zst"], "--range=x: not a list of START:END"),
            (["-d", "-c", "--range=0:1", "--member=tree", "pax.tar.zst"], "give one of them"),
            (["-c", "--member=tree", "pax.tar.zst"], "it goes with -d"),
        ]
        for (command, message) in refused {
            let result = try WeirProcess.run(command, in: scratch.url)
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains(message), "\(command): \(result.stderr)")
        }
        let two = try WeirProcess.run(["-d", "-c", "--range=0:1", "pax.tar.zst", "pax.tar.zst"], in: scratch.url)
        #expect(two.status == 1)
        #expect(two.stderr.contains("--range reads one input, not 2"), "\(two.stderr)")
    }
}
