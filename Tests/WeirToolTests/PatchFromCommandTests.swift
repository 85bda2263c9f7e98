import Foundation
import Testing

/// `--patch-from=OLD`, against the real zstd both ways.
@Suite("weir --patch-from")
struct PatchFromCommandTests {
    /// Writes OLD, random bytes (which only a match against OLD compresses),
    /// and NEW, OLD with a few bytes changed; returns NEW's bytes.
    @discardableResult
    static func pair(_ scratch: Scratch, size: Int = 3 << 20) -> Data {
        var state: UInt64 = 7
        var old = [UInt8](repeating: 0, count: size)
        for index in 0 ..< size {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            old[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        var new = old
        for edit in 1 ... 40 { new[edit * (size / 41)] ^= 0x5A }
        _ = FileManager.default.createFile(atPath: scratch.path("old"), contents: Data(old))
        _ = FileManager.default.createFile(atPath: scratch.path("new"), contents: Data(new))
        return Data(new)
    }

    @Test("weir's patch is one frame far smaller than NEW, and zstd -d --patch-from decodes it, also with -T2")
    func weirToZstd() throws {
        let scratch = Scratch()
        let new = Self.pair(scratch)
        for threads in ["-T1", "-T2"] {
            let made = try WeirProcess.run(["-q", "-f", threads, "--patch-from=old", "new", "-o", "patch.zst"],
                                           in: scratch.url)
            #expect(made.status == 0, "\(made.stderr)")
            let patch = try #require(scratch.data("patch.zst"))
            // Random content: only the prefix makes it small.
            #expect(patch.count < new.count / 100, "\(threads): \(patch.count) bytes")
            let listed = String(decoding: try scratch.zstd(["-l", "patch.zst"]).stdout, as: UTF8.self)
            #expect(listed.contains("     1 "), "one frame: \(listed)")
            let decoded = try scratch.zstd(["-q", "-f", "-d", "--patch-from=old", "patch.zst", "-o", "out"])
            #expect(decoded.status == 0, "\(decoded.stderr)")
            #expect(scratch.data("out") == new)
        }
    }

    @Test("weir -d --patch-from decodes zstd's patch, to a file and to stdout")
    func zstdToWeir() throws {
        let scratch = Scratch()
        let new = Self.pair(scratch)
        let made = try scratch.zstd(["-q", "-f", "-T2", "--patch-from=old", "new", "-o", "zstd.zst"])
        #expect(made.status == 0, "\(made.stderr)")
        let decoded = try WeirProcess.run(["-q", "-d", "--patch-from=old", "zstd.zst", "-o", "out"], in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(scratch.data("out") == new)
        let piped = try WeirProcess.run(["-q", "-dc", "--patch-from=old", "zstd.zst"], in: scratch.url,
                                        stdoutPath: scratch.path("piped"))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(scratch.data("piped") == new)
    }

    @Test("--range decodes a patch against OLD, from a file and a pipe, weir's patch and zstd's (issue 59)")
    func ranges() throws {
        let scratch = Scratch()
        let new = Self.pair(scratch)
        #expect(try WeirProcess.run(["-q", "--patch-from=old", "new", "-o", "weir.zst"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-q", "--patch-from=old", "new", "-o", "zstd.zst"]).status == 0)
        for name in ["weir.zst", "zstd.zst"] {
            let file = try WeirProcess.run(["-d", "--patch-from=old", "--range=1000:+100,3000000:", name],
                                           in: scratch.url)
            #expect(file.status == 0 && file.stdout == new[1000 ..< 1100] + new[3_000_000...],
                    "\(name): \(file.stderr)")
            let pipe = try WeirProcess.shell("cat \(name) | $WEIR -d --patch-from=old --range=1000:+100",
                                             in: scratch.url)
            #expect(pipe.status == 0 && pipe.stdout == new[1000 ..< 1100], "\(name): \(pipe.stderr)")
            // Without OLD, the frame cannot be decoded: said, nothing written.
            let without = try WeirProcess.run(["-d", "--range=1000:+100", name], in: scratch.url)
            #expect(without.status == 1 && without.stdout.isEmpty, "\(name)")
        }
    }

    @Test("a patch against an OLD above 128 MiB decodes: the memory limit is raised to cover OLD, as zstd raises it")
    func largeOld() throws {
        let scratch = Scratch()
        let made = try WeirProcess.shell("""
            head -c 140000000 /dev/urandom > old && cp old new
            printf 'EDIT' | dd of=new bs=1 seek=70000000 conv=notrunc status=none
            $WEIR -q --patch-from=old new -o weir.zst && zstd -q --patch-from=old new -o zstd.zst
            zstd -lv weir.zst zstd.zst 2>&1 | grep 'Window Size'
            """, in: scratch.url, timeout: 300)
        #expect(made.status == 0, "\(made.stderr)")
        // Both patches need a window above libzstd's default limit of 128 MiB.
        let windows = String(decoding: made.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.split(separator: "(").last.flatMap { Int($0.prefix { $0.isNumber }) }
        }
        #expect(windows.count == 2 && windows.allSatisfy { $0 > 128 << 20 }, "\(made.stdout)")
        for patch in ["weir.zst", "zstd.zst"] {
            let decoded = try WeirProcess.shell("""
                $WEIR -q -d --patch-from=old \(patch) -o out && cmp out new && rm out
                $WEIR -q -dc --patch-from=old \(patch) | cmp - new && echo same
                """, in: scratch.url, timeout: 300)
            #expect(String(decoding: decoded.stdout, as: UTF8.self) == "same\n", "\(patch): \(decoded.stderr)")
        }
    }

    @Test("OLD missing or a directory: exit 1, a message naming OLD, no output")
    func badOld() throws {
        let scratch = Scratch()
        Self.pair(scratch)
        try FileManager.default.createDirectory(atPath: scratch.path("folder"), withIntermediateDirectories: false)
        for old in ["missing", "folder"] {
            let run = try WeirProcess.run(["-q", "--patch-from=\(old)", "new", "-o", "patch.zst"], in: scratch.url)
            #expect(run.status == 1, "\(old): \(run.stderr)")
            #expect(run.stderr.contains(old), "\(run.stderr)")
            #expect(!scratch.exists("patch.zst"))
        }
    }

    @Test("a patch decoded with the wrong OLD fails with a checksum error, exit 1, nothing under the output's name")
    func wrongOld() throws {
        let scratch = Scratch()
        Self.pair(scratch)
        try WeirProcess.run(["-q", "--patch-from=old", "new", "-o", "patch.zst"], in: scratch.url)
        scratch.text("other", size: 3 << 20)
        let run = try WeirProcess.run(["-q", "-d", "--patch-from=other", "patch.zst", "-o", "out"], in: scratch.url)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.lowercased().contains("checksum") || run.stderr.contains("corrupt"), "\(run.stderr)")
        #expect(!scratch.exists("out"))
        #expect(!scratch.names.contains { $0.hasPrefix("out") || $0.hasPrefix(".out") }, "\(scratch.names)")
    }

    @Test("refused as zstd refuses: with -D, several inputs, OLD on stdin, NEW on stdin without --stream-size")
    func refusals() throws {
        let scratch = Scratch()
        Self.pair(scratch)
        scratch.text("dict", size: 1000)
        let cases: [([String], String)] = [
            (["--patch-from=old", "-D", "dict", "new", "-o", "p.zst"], "-D"),
            (["--patch-from=old", "new", "old", "-c"], "multiple files"),
            (["--patch-from=-", "new", "-o", "p.zst"], "standard input"),
            (["--patch-from=old", "-", "-o", "p.zst"], "--stream-size"),
        ]
        for (arguments, expected) in cases {
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(expected), "\(arguments): \(run.stderr)")
            #expect(!scratch.exists("p.zst"))
        }
    }
}
