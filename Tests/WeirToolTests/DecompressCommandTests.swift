import Foundation
import Testing

/// `weir -d` against the files real tools write.
@Suite("weir decompress")
struct DecompressCommandTests {
    @Test("decodes zstd, zstd -T2, pzstd and concatenated files; names the output from the suffix")
    func interoperability() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        try scratch.zstd(["-q", "-3", "in", "-o", "single.zst"])
        try scratch.zstd(["-q", "-T2", "in", "-o", "multi.zstd"])
        _ = try WeirProcess.run(["-p", "2", "-q", "in", "-o", "p.tzst"], in: scratch.url, executable: "/usr/bin/pzstd")
        for (file, output) in [("single.zst", "single"), ("multi.zstd", "multi"), ("p.tzst", "p.tar")] {
            let run = try WeirProcess.run(["-d", file], in: scratch.url)
            #expect(run.status == 0, "\(file): \(run.stderr)")
            #expect(scratch.data(output) == original, "\(file)")
        }
        let cat = try WeirProcess.shell(
            "cat single.zst multi.zstd | $WEIR -dc | cmp - <(cat in in) && echo same", in: scratch.url)
        #expect(String(decoding: cat.stdout, as: UTF8.self) == "same\n", "\(cat.stderr)")
    }

    @Test("weir's own output round-trips through weir -d from a pipe")
    func roundTrip() throws {
        let scratch = Scratch()
        scratch.text("in", size: 5_000_000)
        let run = try WeirProcess.shell(
            "$WEIR -q -c --chunk-size 1M in | $WEIR -q -d | cmp - in && echo same", in: scratch.url)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "same\n", "\(run.stderr)")
    }

    @Test("a frame or member damaged in the middle, decoded on -T workers: every one before it is written, then exit 1",
          arguments: ["zstd", "gzip", "xz", "lz4"])
    func damagedOnWorkers(format: String) throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 16 << 16)
        let piece = 64 << 10, damaged = 10
        // Members are independent: the file of the first 10 pieces is the
        // first 10 members, so its size is where the 11th starts.
        _ = FileManager.default.createFile(atPath: scratch.path("head"), contents: original.prefix(damaged * piece))
        let write = "$WEIR -q -c -B 64K --no-seek-table --format=\(format)"
        _ = try WeirProcess.shell("\(write) in > in.z && \(write) head > head.z", in: scratch.url)
        let start = try #require(scratch.data("head.z")).count
        var bytes = try #require(scratch.data("in.z"))
        for index in start + 200 ..< start + 216 { bytes[index] ^= 0x5A }
        _ = FileManager.default.createFile(atPath: scratch.path("bad.z"), contents: bytes)
        // From a pipe, only zstd frames are decoded on workers (the other
        // formats stream, as their own tools do).
        let pipe = format == "zstd" ? ["cat bad.z | $WEIR -q -dc -T2"] : []
        for line in ["$WEIR -q -dc -T2 bad.z", "$WEIR -q -dc -T4 bad.z"] + pipe {
            let run = try WeirProcess.shell(line + "; echo \"exit $?\" >&2", in: scratch.url)
            // A Bool: a failed `==` of two large Data would be diffed in the report.
            let before = run.stdout == original.prefix(damaged * piece)
            #expect(before, "\(line): \(run.stdout.count) bytes, not the \(damaged * piece) before the damage")
            let named = line.hasPrefix("cat") ? "(stdin): " : "bad.z: "
            #expect(run.stderr.contains(named) && run.stderr.hasSuffix("exit 1\n"), "\(line): \(run.stderr)")
        }
    }

    @Test("cat a.zst BAD-MAGIC b.zst: every whole frame before the damage is written, as many bytes as zstd writes")
    func damageBetweenFiles() throws {
        let scratch = Scratch()
        scratch.text("a", size: 4 << 20, seed: 7)
        scratch.text("b", size: 3 << 20, seed: 8)
        // weir's a.zst: frames and a seek table; zstd's b.zst: one frame.
        _ = try FormatsCommandTests.sh("$WEIR -q -B1M -T2 a && zstd -q b && "
                                       + "{ cat a.zst; printf 'BAD-MAGIC'; cat b.zst; } > m.zst", scratch)
        let reference = try WeirProcess.shell("zstd -dc m.zst", in: scratch.url)
        #expect(reference.status != 0 && reference.stdout == scratch.data("a"), "zstd: \(reference.stdout.count) bytes")
        for line in ["cat m.zst | $WEIR -dc", "$WEIR -dc m.zst", "$WEIR -dc -T1 m.zst", "$WEIR -dc -T2 m.zst",
                     "$WEIR -dc < m.zst"] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            let same = run.stdout == reference.stdout
            #expect(run.status == 1 && same, "\(line): \(run.stdout.count) bytes, zstd \(reference.stdout.count)")
            #expect(run.stderr.contains("weir: "), "\(line): \(run.stderr)")
        }
    }

    @Test("a checksum mismatch fails, --no-check lets it through")
    func checksum() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 50_000)
        try scratch.zstd(["-q", "in", "-o", "in.zst"])
        var bytes = [UInt8](scratch.data("in.zst")!)
        bytes[bytes.count - 1] ^= 0x01
        _ = FileManager.default.createFile(atPath: scratch.path("bad.zst"), contents: Data(bytes))
        let failed = try WeirProcess.run(["-d", "bad.zst"], in: scratch.url)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("weir: bad.zst: checksum mismatch"))
        #expect(!scratch.exists("bad"))
        let forced = try WeirProcess.run(["-d", "--no-check", "bad.zst"], in: scratch.url)
        #expect(forced.status == 0)
        #expect(scratch.data("bad") == original)
    }

    @Test("a compressed block of size 0 decodes as zstd decodes it: from a file, on one thread, from a pipe, in -t")
    func emptyCompressedBlock() throws {
        let scratch = Scratch()
        // The decoder fuzzer's find (issue 49): a dictionary-ID byte and one
        // empty compressed last block; and "hello" in a raw block before one.
        let frames: [(String, [UInt8])] = [
            ("dict-id.zst", [0x28, 0xB5, 0x2F, 0xFD, 0x01, 0x24, 0x00, 0x05, 0x00, 0x00]),
            (
                "hello.zst",
                [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00, 0x28, 0x00, 0x00] + Array("hello".utf8) + [0x05, 0x00, 0x00]
            ),
        ]
        for (name, bytes) in frames {
            _ = FileManager.default.createFile(atPath: scratch.path(name), contents: Data(bytes))
        }
        scratch.text("in", size: 200_000)
        try WeirProcess.run(["-q", "-B64K", "in", "-o", "in.zst"], in: scratch.url)
        for (name, _) in frames {
            let stock = try scratch.zstd(["-q", "-dc", name])
            #expect(stock.status == 0, "zstd decodes \(name)")
            let all = "cat \(name) in.zst \(name) > all.zst && zstd -dc all.zst > expected && "
            for command in ["$WEIR -dc \(name)", "$WEIR -T1 -dc \(name)", "cat \(name) | $WEIR -dc",
                            "$WEIR -dc all.zst", "$WEIR -T1 -dc all.zst", "cat all.zst | $WEIR -dc"] {
                let expected = command.contains("all.zst") ? "expected" : "<(zstd -dc \(name))"
                let run = try WeirProcess.shell(all + "\(command) | cmp - \(expected) && echo same", in: scratch.url)
                #expect(String(decoding: run.stdout, as: UTF8.self) == "same\n", "\(command): \(run.stderr)")
            }
            let tested = try WeirProcess.run(["-t", name], in: scratch.url)
            #expect(tested.status == 0, "\(name): \(tested.stderr)")
        }
    }

    @Test("-t verifies without writing; -M refuses frames that need a bigger window")
    func testAndMemory() throws {
        let scratch = Scratch()
        scratch.text("in", size: 4_000_000)
        try scratch.zstd(["-q", "--long=25", "-1", "in", "-o", "long.zst"])
        let tested = try WeirProcess.run(["-t", "long.zst"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(scratch.names == ["in", "long.zst"])
        let limited = try WeirProcess.run(["-d", "-M", "1MiB", "long.zst", "-o", "out"], in: scratch.url)
        #expect(limited.status == 1)
        #expect(limited.stderr.contains("memory limit"))
        #expect(!scratch.exists("out"))
    }

    @Test("-M refuses every frame whose window is above it, from a file and a pipe, and names the -M needed")
    func memoryLimitOnEveryPath() throws {
        let scratch = Scratch()
        // A single-segment frame's window is its content size: 500,000 bytes
        // (streamed under -M64K, as more than a quarter of the 1 MiB budget)
        // and 200,000 bytes (decoded whole on a worker).
        let large = scratch.text("large", size: 500_000, seed: 71)
        let small = scratch.text("small", size: 200_000, seed: 72)
        try scratch.zstd(["-q", "-3", "--single-thread", "large", "-o", "large.zst"])
        try scratch.zstd(["-q", "-3", "--single-thread", "small", "-o", "small.zst"])
        try WeirProcess.run(["-q", "--chunk-size", "16M", "large", "-o", "large.weir.zst"], in: scratch.url)
        let refusals = [("large.zst", "500000", "489K"), ("small.zst", "200000", "196K"),
                        ("large.weir.zst", "500000", "489K")]
        for (file, window, needed) in refusals {
            let stock = try scratch.zstd(["-q", "-t", "-M64K", file])
            #expect(stock.status != 0, "zstd refuses \(file) too")
            let hint =
                "needs a window of \(window) bytes, more than the memory limit of 65536 bytes (use "
                    + "--long=\(window == "500000" ? 19 : 18) or -M\(needed))"
            let filed = try WeirProcess.run(["-d", "-M64K", file, "-o", "out"], in: scratch.url)
            #expect(filed.status == 1, "\(file)")
            #expect(filed.stderr.contains("weir: \(file): frame 0 at offset 0 \(hint)"), "\(filed.stderr)")
            #expect(!scratch.exists("out"))
            let tested = try WeirProcess.run(["-t", "-M64K", file], in: scratch.url)
            #expect(tested.status == 1, "\(file)")
            #expect(tested.stderr.contains(hint), "\(tested.stderr)")
            let piped = try WeirProcess.shell("cat \(file) | $WEIR -d -M64K > out", in: scratch.url)
            #expect(piped.status == 1, "\(file) from a pipe")
            #expect(piped.stderr.contains("weir: (stdin): frame 0 at offset 0 \(hint)"), "\(piped.stderr)")
            // The -M it names is enough, on both paths.
            let enough = try WeirProcess.run(["-d", "-f", "-M\(needed)", file, "-o", "out"], in: scratch.url)
            #expect(enough.status == 0, "\(file): \(enough.stderr)")
            #expect(scratch.data("out") == (window == "500000" ? large : small), "\(file)")
            let pipedEnough = try WeirProcess.shell(
                "cat \(file) | $WEIR -d -M\(needed) | cmp - \(window == "500000" ? "large" : "small") && echo same",
                in: scratch.url)
            #expect(String(decoding: pipedEnough.stdout, as: UTF8.self) == "same\n", "\(file): \(pipedEnough.stderr)")
            try FileManager.default.removeItem(atPath: scratch.path("out"))
        }
        // weir's frames of 128 KiB (each its own window) pass a limit of exactly 128 KiB.
        try WeirProcess.run(["-q", "--chunk-size", "128K", "large", "-o", "chunked.zst"], in: scratch.url)
        let exact = try WeirProcess.shell(
            "$WEIR -dc -M128K chunked.zst | cmp - large && cat chunked.zst | $WEIR -d -M128K | cmp - large && echo "
                + "same",
            in: scratch.url)
        #expect(String(decoding: exact.stdout, as: UTF8.self) == "same\n", "\(exact.stderr)")
        let below = try WeirProcess.run(["-t", "-M127K", "chunked.zst"], in: scratch.url)
        #expect(below.status == 1)
        #expect(below.stderr.contains("needs a window of 131072 bytes"), "\(below.stderr)")
    }
}
