import Foundation
import Testing

/// WEIR_CLEVEL and WEIR_NBTHREADS, as zstd users know ZSTD_CLEVEL and
/// ZSTD_NBTHREADS: defaults that flags override, and invalid values ignored
/// with a warning that names them.
@Suite("environment variables")
struct EnvironmentTests {
    /// The level and threads a compression used, from its --json record.
    static func settings(_ arguments: [String], environment: [String: String],
                         in scratch: Scratch) throws -> (level: Int, threads: Int, stderr: String) {
        let result = try WeirProcess.run(["-c", "--json"] + arguments + ["data"], in: scratch.url,
                                         environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("{") })
        let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let level = try #require(record["level"] as? Int)
        let threads = try #require(record["threads"] as? Int)
        return (level, threads, result.stderr)
    }

    @Test("WEIR_CLEVEL and WEIR_NBTHREADS set the defaults",
          arguments: [("7", 7), ("19", 19), ("-5", -5), (" 12 ", 12)])
    func defaults(level text: String, expected: Int) throws {
        let scratch = Scratch()
        scratch.text("data", size: 100_000)
        let used = try Self.settings([], environment: ["WEIR_CLEVEL": text, "WEIR_NBTHREADS": "3"], in: scratch)
        #expect(used.level == expected)
        #expect(used.threads == 3)
        #expect(!used.stderr.contains("warning"))
    }

    @Test("flags override them")
    func flagsWin() throws {
        let scratch = Scratch()
        scratch.text("data", size: 100_000)
        let environment = ["WEIR_CLEVEL": "19", "WEIR_NBTHREADS": "3"]
        let flags = try Self.settings(["-1", "-T2"], environment: environment, in: scratch)
        #expect(flags.level == 1)
        #expect(flags.threads == 2)
        let glued = try Self.settings(["-T1", "--fast=4"], environment: environment, in: scratch)
        #expect(glued.level == -4)
        #expect(glued.threads == 1)
        // A negative WEIR_CLEVEL (--fast) does not beat a level flag either.
        let fast = try Self.settings(["-6"], environment: ["WEIR_CLEVEL": "-5"], in: scratch)
        #expect(fast.level == 6)
        // Above 19 without --ultra: clamped with the same warning as -20.
        let high = try Self.settings([], environment: ["WEIR_CLEVEL": "21"], in: scratch)
        #expect(high.level == 19)
        #expect(high.stderr.contains("above the maximum"))
        #expect(try Self.settings(["--ultra"], environment: ["WEIR_CLEVEL": "21"], in: scratch).level == 21)
    }

    @Test("a level above the maximum is clamped, as -99 is and as zstd clamps ZSTD_CLEVEL")
    func clamped() throws {
        let scratch = Scratch()
        scratch.text("data", size: 100_000)
        let high = try Self.settings([], environment: ["WEIR_CLEVEL": "99"], in: scratch)
        #expect(high.level == 19)
        #expect(
            high.stderr.contains(
                "weir: warning: compression level 99 is above the maximum 19 without --ultra; using 19"),
            "\(high.stderr)")
        #expect(!high.stderr.contains("ignoring"))
        let ultra = try Self.settings(["--ultra"], environment: ["WEIR_CLEVEL": "99"], in: scratch)
        #expect(ultra.level == 22)
        #expect(ultra.stderr.contains("compression level 99 is above the maximum 22; using 22"), "\(ultra.stderr)")
        // A flag still wins, without a warning about the variable's level.
        let flag = try Self.settings(["-5"], environment: ["WEIR_CLEVEL": "99"], in: scratch)
        #expect(flag.level == 5)
        #expect(!flag.stderr.contains("warning"))
    }

    @Test(
        "an invalid value is ignored with a warning that names it",
        arguments: [
            ("WEIR_CLEVEL", "abc", "not a level"), ("WEIR_CLEVEL", "0", "not a level"),
            ("WEIR_CLEVEL", "5x", "not a level"), ("WEIR_CLEVEL", "99999999999999999999", "not a level"),
            ("WEIR_NBTHREADS", "many", "not a number of threads"),
            ("WEIR_NBTHREADS", "-1", "not a number of threads"), ("WEIR_NBTHREADS", "999", "not a number of threads"),
        ])
    func invalid(variable: String, value: String, reason: String) throws {
        let scratch = Scratch()
        scratch.text("data", size: 100_000)
        let used = try Self.settings([], environment: [variable: value], in: scratch)
        #expect(used.stderr.hasPrefix("weir: warning: ignoring \(variable)=\(value): \(reason)"))
        #expect(used.level == 3)
        // -qq hides warnings, as it hides the others.
        let quiet = try WeirProcess.run(["-qq", "-c", "data"], in: scratch.url, environment: [variable: value])
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty)
    }

    @Test("they do not change decompression")
    func decompression() throws {
        let scratch = Scratch()
        let original = scratch.text("data", size: 200_000)
        try WeirProcess.run(["-q", "data"], in: scratch.url)
        let result = try WeirProcess.run(["-dc", "data.zst"], in: scratch.url,
                                         environment: ["WEIR_CLEVEL": "19", "WEIR_NBTHREADS": "1"])
        #expect(result.status == 0)
        #expect(result.stdout == original)
    }
}
