import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The command line as zstd's users and scripts write it: levels glued to
/// other short flags, the last of `--rm` and `-k` winning, `-o -`, and
/// usage errors ending with status 1.
@Suite("weir command line")
struct ArgumentCommandTests {
    /// The level and threads a run used, from its --json record.
    static func settings(_ arguments: [String], in scratch: Scratch,
                         sourceLocation: SourceLocation = #_sourceLocation) throws -> (level: Int?, threads: Int) {
        let result = try WeirProcess.run(["--json"] + arguments, in: scratch.url)
        #expect(result.status == 0, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("{") },
                                "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                                  sourceLocation: sourceLocation)
        return (record["level"] as? Int, try #require(record["threads"] as? Int, sourceLocation: sourceLocation))
    }

    @Test("usage errors end with status 1, as in zstd, with the message and the usage on stderr",
          arguments: [["--bogus"], ["-T", "abc"], ["--fast=0"], ["-d", "-t"], ["-T", "999"], ["-o"], ["-o", "x", "a", "b"]])
    func usageErrors(arguments: [String]) throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000)
        scratch.text("b", size: 1000)
        let run = try WeirProcess.run(arguments, in: scratch.url)
        #expect(run.status == 1, "\(arguments): \(run.stderr)")
        #expect(run.stderr.hasPrefix("Error: "), "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("Usage: weir"), "\(arguments): \(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test("--help, -h and --version exit with 0", arguments: [["--help"], ["-h"], ["--version"], ["-V"], ["-qh"]])
    func cleanExits(arguments: [String]) throws {
        let scratch = Scratch()
        let run = try WeirProcess.run(arguments, in: scratch.url)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        #expect(!run.stdout.isEmpty)
    }
}
