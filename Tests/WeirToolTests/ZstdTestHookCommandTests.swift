import Foundation
import Testing

/// zstd's test hooks, which its tests/cli-tests use and weir takes as zstd
/// does: `--fake-stderr-is-console` and `--trace-file-stat`.
@Suite("weir with zstd's test hooks")
struct ZstdTestHookCommandTests {
    /// A producer slow enough for the progress line to be drawn (4 MB, a pause, the rest of `in`).
    static let slowInput = ProgressCommandTests.slowInput

    @Test(
        """
        --fake-stderr-is-console draws the progress line and the summary on a stderr that is no terminal; -q hides \
        them
        """
    )
    func fakeConsole() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 8_000_000)
        let faked = try WeirProcess.shell(
            "\(Self.slowInput) | $WEIR -c --fake-stderr-is-console > out.zst", in: scratch.url)
        #expect(faked.status == 0)
        #expect(faked.stderr.hasPrefix("\r(stdin) "), "\(faked.stderr.debugDescription)")
        // The line is taken away before the summary, as on a terminal.
        #expect(faked.stderr.contains("\r\u{1B}[K(stdin): "), "\(faked.stderr.debugDescription)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        for flags in ["", "-q --fake-stderr-is-console"] {
            let run = try WeirProcess.shell("\(Self.slowInput) | $WEIR -c \(flags) > out.zst", in: scratch.url)
            #expect(run.status == 0 && run.stderr.isEmpty, "\(flags): \(run.stderr.debugDescription)")
        }
    }

    @Test("--trace-file-stat prints the checks in zstd's words and format, beginning as zstd's trace does")
    func traceFileStat() throws {
        let scratch = Scratch()
        scratch.text("a", size: 100_000)
        // As cli-tests' file-stat/compress-file-to-file.sh.
        let ours = try WeirProcess.run(["-q", "--trace-file-stat", "a", "-o", "a.zst"], in: scratch.url)
        #expect(ours.status == 0, "\(ours.stderr)")
        let lines = ours.stderr.split(separator: "\n").map(String.init)
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("Trace:FileStat: ") }, "\(ours.stderr)")
        #expect(lines.prefix(2) == ["Trace:FileStat: > UTIL_isLink(a)", "Trace:FileStat: < 0"], "\(ours.stderr)")
        let theirs = try scratch.zstd(["-q", "--trace-file-stat", "a", "-o", "z.zst"])
        #expect(theirs.stderr.split(separator: "\n").prefix(2).map(String.init) == Array(lines.prefix(2)))
        #expect(try scratch.zstd(["-t", "a.zst"]).status == 0)

        // A faked console is a console to the check, as in zstd.
        let faked = try WeirProcess.run(["--trace-file-stat", "--fake-stderr-is-console", "-f", "a", "-o", "a.zst"],
                                        in: scratch.url)
        #expect(faked.stderr.contains("Trace:FileStat: > UTIL_isConsole(2)\nTrace:FileStat: < 1\n"), "\(faked.stderr)")
        let piped = try WeirProcess.run(["-q", "--trace-file-stat", "-c"], in: scratch.url, stdin: "a")
        #expect(piped.stderr.hasPrefix("Trace:FileStat: > UTIL_isConsole(0)\nTrace:FileStat: < 0\n"), "\(piped.stderr)")
        // Without the flag, nothing.
        let plain = try WeirProcess.run(["-q", "-f", "a", "-o", "a.zst"], in: scratch.url)
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
    }
}
