import Foundation
import Testing

/// `--adapt[=min=N,max=N]`: each frame's level chosen as it starts, from how
/// the output drains; zstd 1.5.4's flag, its limits and refusals.
@Suite("weir --adapt")
struct AdaptCommandTests {
    /// A consumer that drains its standard input slowly: 64 KiB every 20 ms
    /// (at most 3.2 MB/s), into `out`.
    static let slowReader = "python3 -c 'import sys,time\nwhile (b := sys.stdin.buffer.read1(65536)):\n"
        + "    sys.stdout.buffer.write(b); sys.stdout.flush(); time.sleep(0.02)'"

    @Test("the output decodes with zstd to the input, and its seek table lists its frames (file and pipe)")
    func decodes() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 6_000_000)
        let file = try WeirProcess.run(["--adapt", "-B1M", "in", "-o", "file.zst"], in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(try scratch.zstd(["-dc", "file.zst"]).stdout == original)
        let list = try WeirProcess.run(["-l", "file.zst"], in: scratch.url)
        #expect(list.status == 0 && list.stdout.isEmpty == false, "\(list.stderr)")
        let range = try WeirProcess.run(["-d", "--range=3000000:+1000", "file.zst"], in: scratch.url)
        #expect(range.stdout == original.subdata(in: 3_000_000..<3_001_000), "\(range.stderr)")
        let piped = try WeirProcess.shell("cat in | $WEIR --adapt=min=1,max=9 -B1M -c > piped.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try scratch.zstd(["-dc", "piped.zst"]).stdout == original)
        // No record of a resumable run is left beside the output.
        #expect(scratch.names.allSatisfy { !$0.hasSuffix(".resume") && !$0.hasSuffix(".part") }, "\(scratch.names)")
    }

    @Test("with --format=gzip, xz, lz4 or lzma, --adapt changes nothing: the bytes of the same run without it",
          arguments: ["gzip", "xz", "lz4", "lzma"])
    func otherFormats(format: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 3_000_000)
        for (flags, output) in [([String](), "plain"), (["--adapt=min=1,max=19"], "adapted")] {
            let run = try WeirProcess.run(["-q", "-T2", "-B512K", "--format=\(format)"] + flags + ["in", "-o", output],
                                          in: scratch.url)
            #expect(run.status == 0, "\(flags): \(run.stderr)")
        }
        #expect(scratch.data("adapted") != nil && scratch.data("adapted") == scratch.data("plain"))
    }

    @Test("a slow consumer raises the level above the first one (-v says so), never above max")
    func slowConsumer() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 24_000_000)
        let raised = try WeirProcess.shell("$WEIR --adapt -v -B1M -c in 2> err | \(Self.slowReader) > out.zst; cat err",
                                           in: scratch.url, timeout: 120)
        let stderr = String(decoding: raised.stdout, as: UTF8.self)
        #expect(stderr.contains("weir: in: --adapt: level 3 → 4 at "), "\(stderr)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        let capped = try WeirProcess.shell(
            "$WEIR --adapt=max=4 --json -B1M -c in 2> err | \(Self.slowReader) > capped.zst; cat err",
            in: scratch.url, timeout: 120)
        let json = String(decoding: capped.stdout, as: UTF8.self)
        #expect(json.contains("\"level_max\":4"), "\(json)")
        #expect(try scratch.zstd(["-dc", "capped.zst"]).stdout == original)
    }

    @Test("a fast consumer lowers the level, never below min; zstd's words from -vvvv")
    func fastConsumer() throws {
        let scratch = Scratch()
        scratch.text("in", size: 24_000_000)
        // -16 (btopt), so that the run lasts seconds on any machine: at -9
        // it ended in 0.2 s, before a 150 ms measure could choose.
        let run = try WeirProcess.run(["--adapt=min=3", "-16", "-vvvv", "--json", "-B1M", "-c", "in"],
                                      in: scratch.url, stdoutPath: "/dev/null")
        #expect(run.status == 0, "\(run.stderr)")
        // One level down, or two when the writer was never busy.
        #expect(run.stderr.contains(#/--adapt: level 16 → 1[45] at /#), "\(run.stderr)")
        #expect(run.stderr.contains("faster speed , lighter compression"), "\(run.stderr)")
        let lowest = run.stderr.firstMatch(of: /"level_min":(-?\d+)/).flatMap { Int($0.1) }
        #expect(lowest.map { (3...15).contains($0) } == true, "\(run.stderr)")
        #expect(!run.stderr.contains("→ 2 at"))
    }

    @Test("as zstd: limits put the level in range; bad lists and --single-thread are refused with status 1")
    func limitsAndRefusals() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        let json = try WeirProcess.run(["--adapt=min=5,max=7", "-1", "--json", "-c", "in"], in: scratch.url)
        #expect(json.status == 0 && json.stderr.contains("\"level\":5"), "\(json.stderr)")
        for arguments in [["--adapt=min=5,max=2"], ["--adapt="], ["--adapt=level=3"], ["--adapt=min=1,"],
                          ["--adapt", "--single-thread"], ["-T2", "--single-thread", "--adapt"]] {
            let refused = try WeirProcess.run(arguments + ["-c", "in"], in: scratch.url)
            #expect(refused.status == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }
        for arguments in [["--single-thread", "-T2", "--adapt"], ["--adapt", "-T1"], ["--adapt=max=22"],
                          ["--adapt=min=-5,max=-1"]] {
            let accepted = try WeirProcess.run(arguments + ["-c", "in"], in: scratch.url)
            #expect(accepted.status == 0, "\(arguments): \(accepted.stderr)")
        }
        // Decompressing, --adapt changes nothing (zstd ignores it there).
        #expect(try WeirProcess.run(["in"], in: scratch.url).status == 0)
        #expect(try WeirProcess.run(["-d", "--adapt", "-c", "in.zst"], in: scratch.url).status == 0)
    }

    @Test("adapting, frames are 8 MiB whatever the level: -19's own 64 MiB would leave 24 MB two frames")
    func eightMiBFrames() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 24_000_000)
        let run = try WeirProcess.run(["--adapt=max=1", "-19", "-T2", "--json", "-c", "in"], in: scratch.url,
                                      stdoutPath: "out.zst")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("\"frames\":3,"), "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
    }

    @Test("with -D, every level --adapt picks uses the dictionary: zstd -D decodes it, zstd without it cannot")
    func withDictionary() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 12_000_000)
        // Samples: the input's first 400 KB in pieces of 2 KB.
        let made = try WeirProcess.shell("mkdir samples && head -c 400000 in | split -b 2000 - samples/s"
                                         + " && zstd -q --train samples/* -o dict", in: scratch.url)
        #expect(made.status == 0 && scratch.exists("dict"), "\(made.stderr)")
        let run = try WeirProcess.shell(
            "$WEIR --adapt -v -D dict -B1M -c in 2> err | \(Self.slowReader) > out.zst; cat err",
            in: scratch.url, timeout: 120)
        let stderr = String(decoding: run.stdout, as: UTF8.self)
        #expect(stderr.contains("--adapt: level 3 → "), "\(stderr)")
        #expect(try scratch.zstd(["-q", "-D", "dict", "-dc", "out.zst"]).stdout == original)
        #expect(try scratch.zstd(["-q", "-dc", "out.zst"]).status == 1)
    }
}
