import Foundation
import Testing

/// Several inputs and one `-o FILE`: their results written into it in turn,
/// with zstd's warning, question and refusals, side by side with zstd.
@Suite("weir FILE... -o ONE, against zstd")
struct ConcatenationCommandTests {
    @Test("compressing several files into one -o: zstd -d gives them back in order; -d of them gives the same")
    func roundTrip() throws {
        let scratch = Scratch()
        let first = scratch.text("a", size: 50_000, seed: 1)
        let second = scratch.text("b", size: 3_000_000, seed: 2)
        let run = try WeirProcess.run(["-f", "a", "b", "-o", "ab.zst"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("concatenated into a single output file: ab.zst"), "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "ab.zst"]).stdout == first + second)
        try scratch.zstd(["-q", "a", "-o", "a.zst"])
        try scratch.zstd(["-q", "b", "-o", "b.zst"])
        let back = try WeirProcess.run(["-q", "-d", "-f", "a.zst", "b.zst", "-o", "ab"], in: scratch.url)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(scratch.data("ab") == first + second)
    }

    @Test("without -f: asked (a y proceeds; nothing, or stdin among the inputs, refuses); -q refuses; as zstd")
    func asked() throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000, seed: 1)
        scratch.text("b", size: 1000, seed: 2)
        _ = FileManager.default.createFile(atPath: scratch.path("y"), contents: Data("y\n".utf8))
        for tool in ["weir", "zstd"] {
            func run(_ arguments: [String], stdin: String? = nil) throws -> WeirProcess.Result {
                tool == "weir" ? try WeirProcess.run(arguments, in: scratch.url, stdin: stdin)
                    : try WeirProcess.run(arguments, in: scratch.url, stdin: stdin, executable: "/usr/bin/zstd")
            }
            let none = try run(["a", "b", "-o", "\(tool)1.zst"])
            #expect(none.status == 1 && !scratch.exists("\(tool)1.zst"), "\(tool): \(none.stderr)")
            let quiet = try run(["-q", "a", "b", "-o", "\(tool)2.zst"], stdin: "y")
            #expect(quiet.status == 1 && !scratch.exists("\(tool)2.zst"), "\(tool): \(quiet.stderr)")
            let yes = try run(["a", "b", "-o", "\(tool)3.zst"], stdin: "y")
            #expect(yes.status == 0 && scratch.exists("\(tool)3.zst"), "\(tool): \(yes.stderr)")
            let piped = try run(["a", "-", "-o", "\(tool)4.zst"], stdin: "y")
            #expect(piped.status == 1 && !scratch.exists("\(tool)4.zst"), "\(tool): \(piped.stderr)")
        }
    }

    @Test("--rm with one output keeps every input, as zstd; the output has the default mode, not an input's")
    func keepsInputs() throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000, seed: 1)
        scratch.text("b", size: 1000, seed: 2)
        chmod(scratch.path("a"), 0o600)
        chmod(scratch.path("b"), 0o600)
        let run = try WeirProcess.shell("umask 022 && $WEIR -f --rm a b -o ab.zst", in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("input files will not be removed"), "\(run.stderr)")
        #expect(scratch.exists("a") && scratch.exists("b"))
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.path("ab.zst"))[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }
}
