import Foundation
import Testing

/// A resumable command of the resume tests (compression and
/// decompression): stopped after its first checkpoint, then run again.
struct ResumeScenario {
    /// The command, run in the scratch folder.
    let command: String
    /// The input, as messages name it.
    let input: String
    /// The output file the command writes.
    let output: String

    /// `NAME.part`.
    var part: String { output + ".part" }
    /// `.NAME.part.resume`.
    var record: String { "." + output + ".part.resume" }

    /// A scratch folder holding `files` (name and bytes; nil bytes: an
    /// input that could not be made, which fails the test).
    static func folder(holding files: [(name: String, bytes: Data?)]) throws -> Scratch {
        let scratch = Scratch()
        for file in files {
            try #require(file.bytes).write(to: URL(fileURLWithPath: scratch.path(file.name)))
        }
        return scratch
    }

    /// Runs `command` and sends it `signal` once its record holds a
    /// checkpoint; returns the stderr, with `status N` (its exit status).
    func interrupted(_ scratch: Scratch, signal: String, command: String? = nil) throws -> String {
        let run = try WeirProcess.shell("""
            \(TestShell.asForeground)\(command ?? self.command) & pid=$!
            for i in $(seq 1200); do grep -qs '^checkpoint' \(record) && break; sleep 0.05; done
            kill -\(signal) $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        return run.stderr
    }

    /// Stops the command with SIGTERM, runs `prepare` (shell lines) and then
    /// `command` (this one by default), and expects it to finish, saying
    /// that it started over for `reason`.
    func startsOver(_ scratch: Scratch, prepare: String, command: String? = nil, reason: String) throws {
        _ = try interrupted(scratch, signal: "TERM")
        #expect(scratch.exists(part), "\(reason)")
        let run = try WeirProcess.shell("\(prepare)\n\(command ?? self.command)", in: scratch.url, timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("\(part) was not resumed: \(reason); started over"), "\(run.stderr)")
    }

    /// Stops the command with `signal` (exit status `status`), expects the
    /// `.part`, its record and the message, runs the command again and
    /// expects it to resume into `expected`, leaving only `output` beside
    /// the files `others`.
    func stopsAndResumes(_ scratch: Scratch, signal: String, status: Int, expected: Data?,
                         others: [String]) throws {
        let stopped = try interrupted(scratch, signal: signal)
        #expect(stopped.contains("status \(status)"), "\(stopped)")
        #expect(scratch.names == (others + [record, part]).sorted(), "\(scratch.names)")
        if signal != "KILL" {
            #expect(stopped.contains("weir: \(input): cancelled; \(part) keeps the first "), "\(stopped)")
            #expect(stopped.contains("%: the same command goes on from there (remove it to start over)"), "\(stopped)")
        }
        let resumed = try WeirProcess.shell(command, in: scratch.url, timeout: 300)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains(", resumed at "), "\(resumed.stderr)")
        #expect(!resumed.stderr.contains("warning"), "\(resumed.stderr)")
        #expect(expected != nil && scratch.data(output) == expected)
        #expect(scratch.names == (others + [output]).sorted(), "\(scratch.names)")
    }
}
