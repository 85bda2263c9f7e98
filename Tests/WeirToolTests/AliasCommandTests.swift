import Foundation
import Testing

/// zstd's smaller flags that scripts use, each checked against what zstd
/// 1.5.4 does with it: -C, -H, --single-thread, --auto-threads,
/// --[no-]content-size, --stream-size, --memlimit/--memory=,
/// --exclude-compressed, -B, --format=, --[no-]asyncio, --no-dictID.
@Suite("weir zstd aliases")
struct AliasCommandTests {
    /// The `zstd -lv` line starting with `key`, or nil.
    static func listed(_ key: String, file: String, in scratch: Scratch) throws -> String? {
        let list = try scratch.zstd(["-lv", file])
        return String(decoding: list.stdout, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix(key) }.map(String.init)
    }

    @Test("-C turns checksums on after --no-check, in weir as in zstd")
    func checkShort() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        for (arguments, checked) in [(["--no-check", "-C"], true), (["--no-check"], false), (["-qC"], true)] {
            try WeirProcess.run(["-q", "-f"] + arguments + ["in", "-o", "weir.zst"], in: scratch.url)
            try scratch.zstd(["-q", "-f"] + arguments + ["in", "-o", "zstd.zst"])
            let weir = try Self.listed("Check:", file: "weir.zst", in: scratch)
            let zstd = try Self.listed("Check:", file: "zstd.zst", in: scratch)
            #expect(weir?.contains("XXH64") == checked, "\(arguments): \(weir ?? "no Check line")")
            #expect(zstd?.contains("XXH64") == checked, "zstd \(arguments)")
        }
    }

    @Test("-H shows the help and succeeds, as zstd -H shows its long help")
    func longHelp() throws {
        let scratch = Scratch()
        let help = try WeirProcess.run(["-H"], in: scratch.url)
        #expect(help.status == 0)
        #expect(help.stdout == (try WeirProcess.run(["--help"], in: scratch.url)).stdout)
        #expect(String(decoding: help.stdout, as: UTF8.self).contains("--pass-through"))
    }

    @Test("--single-thread is one worker; of it and -T, the last one wins",
          arguments: [(["--single-thread"], 1), (["-T2", "--single-thread"], 1), (["--single-thread", "-T2"], 2),
                      (["--single-thread", "--threads=2", "--single-thread"], 1)])
    func singleThread(flags: [String], threads: Int) throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        let used = try ArgumentCommandTests.settings(["-q", "-c"] + flags + ["in"], in: scratch)
        #expect(used.threads == threads)
    }

    @Test("--auto-threads picks the cores -T0 counts, the number zstd -v reports")
    func autoThreads() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        for kind in ["physical", "logical"] {
            let zstd = try scratch.zstd(["-v", "-T0", "--auto-threads=\(kind)", "-c", "in"])
            let note = try #require(zstd.stderr.split(separator: "\n").first { $0.hasPrefix("Note: ") })
            let expected = Int(note.split(separator: " ")[1])
            let used = try ArgumentCommandTests.settings(["-c", "-T0", "--auto-threads=\(kind)", "in"], in: scratch)
            #expect(used.threads == expected, "\(kind): zstd says \(note)")
        }
        let bad = try WeirProcess.run(["--auto-threads=many", "-c", "in"], in: scratch.url)
        #expect(bad.status == 1)
    }

    @Test("--no-content-size leaves the size out of every frame header, as zstd's; both decoders still decode it")
    func contentSize() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        try WeirProcess.run(["-q", "--chunk-size", "1M", "--no-content-size", "in", "-o", "bare.zst"], in: scratch.url)
        try WeirProcess.run(
            ["-q", "--chunk-size", "1M", "--no-content-size", "--content-size", "in", "-o", "sized.zst"],
            in: scratch.url)
        try scratch.zstd(["-q", "--no-content-size", "in", "-o", "stock.zst"])
        #expect(try Self.listed("Decompressed Size:", file: "bare.zst", in: scratch) == nil)
        #expect(try Self.listed("Decompressed Size:", file: "stock.zst", in: scratch) == nil)
        #expect(try Self.listed("Decompressed Size:", file: "sized.zst", in: scratch)?.contains("(3000000 B)") == true)
        #expect(try WeirProcess.run(["-dc", "bare.zst"], in: scratch.url).stdout == original)
        #expect(try scratch.zstd(["-dc", "bare.zst"]).stdout == original)
    }

    @Test("from a pipe too, every frame of a multi-frame output declares its size: zstd -l gives the total")
    func contentSizeFromPipe() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        let piped = try WeirProcess.shell("cat in | $WEIR -q -T2 -B1M -c > piped.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try Self.frames("piped.zst", in: scratch) == 3)
        #expect(try Self.listed("Decompressed Size:", file: "piped.zst", in: scratch)?.contains("(3000000 B)") == true)
        #expect(try scratch.zstd(["-dc", "piped.zst"]).stdout == original)
    }

    @Test(
        "--stream-size: standard input of that size compresses; another size fails, as in zstd; named files ignore it")
    func streamSize() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 200_000)
        let exact = try WeirProcess.shell("cat in | $WEIR -q --stream-size=200000 | $WEIR -dc | cmp - in && echo same",
                                          in: scratch.url)
        #expect(String(decoding: exact.stdout, as: UTF8.self) == "same\n", "\(exact.stderr)")
        for size in ["199999", "200001"] {
            let wrong = try WeirProcess.shell("cat in | $WEIR -q --stream-size=\(size) > /dev/null", in: scratch.url)
            #expect(wrong.status == 1, "\(size)")
            #expect(
                wrong.stderr.contains("weir: (stdin): the input is 200000 bytes, not the \(size) declared"),
                "\(wrong.stderr)")
            let stock = try WeirProcess.shell("cat in | zstd -q --stream-size=\(size) > /dev/null", in: scratch.url)
            #expect(stock.status != 0)
            // A regular file as standard input is bound by it too (zstd: error 11), from
            // its start or from an offset a script left it at.
            for (redirect, actual) in [
                ("< in", 200_000), ("{ dd bs=1000 count=1 of=/dev/null 2>/dev/null; $WEIR", 199_000),
            ] {
                let command = redirect.hasPrefix("{")
                    ? "\(redirect) -q --stream-size=\(size) > /dev/null; } < in"
                    : "$WEIR -q --stream-size=\(size) \(redirect) > /dev/null"
                let mapped = try WeirProcess.shell(command, in: scratch.url)
                #expect(mapped.status == 1, "\(command): \(mapped.stderr)")
                #expect(
                    mapped.stderr.contains("the input is \(actual) bytes, not the \(size) declared"), "\(mapped.stderr)"
                )
            }
            let stockFile = try WeirProcess.shell("zstd -q --stream-size=\(size) < in > /dev/null", in: scratch.url)
            #expect(stockFile.status != 0)
        }
        let file = try WeirProcess.run(["-q", "--stream-size=5", "in", "-o", "in.zst"], in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == original)
    }

    @Test("--memlimit=, --memory= and --memlimit-decompress= limit the window as -M does, and as zstd's",
          arguments: ["--memlimit=64K", "--memory=64K", "--memlimit-decompress=64K", "--memlimit", "--memory"])
    func memoryLimit(flag: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 500_000)
        // One single-segment frame: its window is its 500,000 bytes at any level.
        try scratch.zstd(["-q", "-3", "in", "-o", "in.zst"])
        let arguments = flag.contains("=") ? [flag] : [flag, "64K"]
        let weir = try WeirProcess.run(["-t"] + arguments + ["in.zst"], in: scratch.url)
        #expect(weir.status == 1)
        #expect(weir.stderr.contains("more than the memory limit of 65536 bytes"), "\(weir.stderr)")
        #expect(try scratch.zstd(["-t"] + arguments + ["in.zst"]).status != 0)
        let roomy = try WeirProcess.run(
            ["-t"]
                + (flag.contains("=")
                    ? [flag.replacingOccurrences(of: "64K", with: "64M")]
                    : [flag, "64M"]) + ["in.zst"], in: scratch.url)
        #expect(roomy.status == 0, "\(roomy.stderr)")
    }

    @Test("--exclude-compressed skips the files zstd skips, and only when compressing (not -d, -l or training)")
    func excludeCompressed() throws {
        let weirFolder = Scratch(), zstdFolder = Scratch()
        let names = ["a.txt", "b.gz", "c.zst", "d.GZ", "e.tlz4", "f.xz.bak", ".lz4"]
        for folder in [weirFolder, zstdFolder] {
            for (index, name) in names.enumerated() { folder.text(name, size: 1_000, seed: UInt64(index + 1)) }
        }
        let weir = try WeirProcess.run(["-q", "--exclude-compressed"] + names, in: weirFolder.url)
        #expect(weir.status == 0, "\(weir.stderr)")
        try zstdFolder.zstd(["-q", "--exclude-compressed"] + names)
        #expect(weirFolder.names == zstdFolder.names)
        #expect(weirFolder.names.contains("a.txt.zst") && !weirFolder.names.contains("b.gz.zst"))
        // Decompressing is not affected.
        let decoded = try WeirProcess.run(["-q", "-d", "--exclude-compressed", "a.txt.zst", "-o", "back"],
                                          in: weirFolder.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(weirFolder.data("back") == weirFolder.data("a.txt"))
        // Listing and training neither: the .zst is listed, and a sample.
        let listed = try WeirProcess.run(["-l", "--exclude-compressed", "a.txt.zst"], in: weirFolder.url)
        #expect(
            listed.status == 0 && String(decoding: listed.stdout, as: UTF8.self).contains("a.txt.zst"),
            "\(listed.stderr)")
        let trained = try WeirProcess.run(["--train", "--exclude-compressed", "-B100", "--maxdict=1K"] + names,
                                          in: weirFolder.url)
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stderr.contains("from \(7 * 10) samples"), "every file cut in ten: \(trained.stderr)")
    }

    /// The zstd frames `zstd -l` counts in `file`, skippable ones (the seek
    /// table) left out.
    static func frames(_ file: String, in scratch: Scratch) throws -> Int? {
        let list = String(decoding: try scratch.zstd(["-l", file]).stdout, as: UTF8.self)
        guard let row = list.split(separator: "\n").dropFirst().first else { return nil }
        let columns = row.split(separator: " ", omittingEmptySubsequences: true).compactMap { Int($0) }
        return columns.count >= 2 ? columns[0] - columns[1] : nil
    }

    @Test(
        """
        -B SIZE is the chunk size, glued or apart, as zstd's job size; with --train, the sample size (see \
        DictionaryCommandTests)
        """
    )
    func jobSize() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        for arguments in [["-B1M"], ["-B", "1MiB"], ["-qB1M"], ["--chunk-size=1M"]] {
            let run = try WeirProcess.run(["-q", "-f"] + arguments + ["in", "-o", "in.zst"], in: scratch.url)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(try Self.frames("in.zst", in: scratch) == 3, "\(arguments)")
            #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == original)
        }
        // One file, cut into 1 KiB samples: enough to train on.
        let train = try WeirProcess.run(["--train", "-B1K", "in", "-o", "dict"], in: scratch.url)
        #expect(train.status == 0, "\(train.stderr)")
        #expect(train.stderr.contains("from \((original.count + 1023) / 1024) samples"), "\(train.stderr)")
    }

    @Test("sizes take K, KB, KiB, M, MB, MiB, G, GB, GiB, all powers of 1024")
    func sizeSuffixes() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_100_000)
        // 3.1 MB is 3 frames of 1 MiB, and would be 4 of 1,000,000 bytes.
        for size in ["1048576", "1024K", "1024KB", "1024KiB", "1M", "1MB", "1MiB"] {
            let run = try WeirProcess.run(["-q", "-f", "-B", size, "in", "-o", "in.zst"], in: scratch.url)
            #expect(run.status == 0, "\(size): \(run.stderr)")
            #expect(try Self.frames("in.zst", in: scratch) == 3, "\(size)")
        }
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == original)
        // A window of 2 MiB: above 64K, below 1G.
        try scratch.zstd(["-q", "-3", "in", "-o", "z.zst"])
        for size in ["64K", "64KB", "64KiB"] {
            let run = try WeirProcess.run(["-t", "-M", size, "z.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("memory limit of 65536 bytes"), "\(size): \(run.stderr)")
        }
        for size in ["1G", "1GB", "1GiB"] {
            let run = try WeirProcess.run(["-q", "-t", "-M", size, "z.zst"], in: scratch.url)
            #expect(run.status == 0, "\(size): \(run.stderr)")
        }
    }

    @Test(
        """
        --format=zstd is accepted both ways; gzip, xz, lzma and lz4 are written (FormatsCommandTests), not with \
        --verify
        """
    )
    func format() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 100_000)
        let zstdFormat = try WeirProcess.run(["-q", "--format=zstd", "in"], in: scratch.url)
        #expect(zstdFormat.status == 0, "\(zstdFormat.stderr)")
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == original)
        let back = try WeirProcess.run(["-q", "-d", "--format=zstd", "in.zst", "-o", "back"], in: scratch.url)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(scratch.data("back") == original)
        for other in ["gzip", "xz", "lzma", "lz4"] {
            let refused = try WeirProcess.run(
                ["-q", "--verify", "--format=\(other)", "in", "-o", "other"], in: scratch.url)
            #expect(refused.status == 1, "\(other)")
            #expect(refused.stderr.contains("--verify checks zstd frames only"), "\(refused.stderr)")
            #expect(scratch.data("other") == nil)
        }
    }

    @Test("--asyncio and --no-asyncio are accepted and change nothing in the output")
    func asyncIO() throws {
        let scratch = Scratch()
        scratch.text("in", size: 2_000_000)
        try WeirProcess.run(["-q", "in", "-o", "plain.zst"], in: scratch.url)
        for flag in ["--asyncio", "--no-asyncio"] {
            let run = try WeirProcess.run(["-q", "-f", flag, "in", "-o", "flag.zst"], in: scratch.url)
            #expect(run.status == 0, "\(flag): \(run.stderr)")
            #expect(scratch.data("flag.zst") == scratch.data("plain.zst"), "\(flag)")
        }
    }

    @Test("--no-dictID leaves the dictionary's ID out of the frames, as zstd's; zstd -d -D and weir -d -D decode them")
    func noDictionaryID() throws {
        let scratch = Scratch()
        let names = DictionaryCommandTests.samples(scratch)
        try scratch.zstd(["-q", "--train"] + names + ["-o", "dict"])
        let original = try #require(scratch.data("s3.json"))
        try WeirProcess.run(["-q", "-D", "dict", "s3.json", "-o", "with.zst"], in: scratch.url)
        let bare = try WeirProcess.run(
            ["-q", "-D", "dict", "--no-dictID", "s3.json", "-o", "bare.zst"], in: scratch.url)
        #expect(bare.status == 0, "\(bare.stderr)")
        try scratch.zstd(["-q", "-D", "dict", "--no-dictID", "s3.json", "-o", "stock.zst"])
        let named = try #require(try DictionaryCommandTests.dictionaryID(scratch, "with.zst"))
        #expect(!named.hasSuffix(" 0"), "\(named)")
        #expect(
            try DictionaryCommandTests.dictionaryID(scratch, "bare.zst")
                == DictionaryCommandTests.dictionaryID(scratch, "stock.zst"))
        #expect(try DictionaryCommandTests.dictionaryID(scratch, "bare.zst") != named)
        #expect(try scratch.zstd(["-dc", "-D", "dict", "bare.zst"]).stdout == original)
        #expect(try WeirProcess.run(["-dc", "-D", "dict", "bare.zst"], in: scratch.url).stdout == original)
    }
}
