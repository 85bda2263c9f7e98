import Foundation
import Testing

/// The other formats Debian's zstd reads and writes (issue 40, parts 4 and
/// 5): weir's .gz, .xz, .lzma and .lz4 decoded by gzip, pigz, zcat, xz and
/// lz4 themselves, and theirs decoded by weir, by magic, as zstd does.
@Suite("weir --format and the formats read by magic")
struct FormatsCommandTests {
    /// Runs a shell line in `scratch`; its stdout as text.
    static func sh(_ line: String, _ scratch: Scratch) throws -> String {
        let run = try WeirProcess.shell(line, in: scratch.url, timeout: 120)
        #expect(run.status == 0, "\(line): \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self)
    }

    @Test("--format=gzip writes FILE.gz in many members on -T2 that gzip, pigz and zcat decode",
          arguments: ["gzip", "xz", "lz4", "lzma"])
    func written(format: String) throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        let run = try WeirProcess.run(["-q", "-T2", "-B", "256K", "--format=\(format)", "in"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let suffix = ["gzip": "gz", "xz": "xz", "lz4": "lz4", "lzma": "lzma"][format]!
        #expect(scratch.exists("in." + suffix) && scratch.data("in") == original)
        let readers = ["gzip": ["gzip -dc", "pigz -dc", "zcat"], "xz": ["xz -dc"], "lz4": ["lz4 -dc"],
                       "lzma": ["xz -dc --format=lzma"]][format]!
        for reader in readers + ["$WEIR -dc", "$WEIR -dc <"] {
            #expect(try Self.sh("\(reader) in.\(suffix) | cmp - in && echo same", scratch) == "same\n", "\(reader)")
        }
        // Its own weir -t, and the name it decompresses to.
        #expect(
            try Self.sh(
                "$WEIR -q -t in.\(suffix) && mv in orig && $WEIR -q -d in.\(suffix) && cmp in orig && echo same",
                scratch) == "same\n")
    }

    @Test("gzip's level is zstd's: -# mapped to 1…9, 3 by default, 6 when called gzip")
    func gzipLevels() throws {
        let scratch = Scratch()
        scratch.text("in", size: 2_000_000)
        _ = try Self.sh("$WEIR -q -1 --format=gzip in -o one.gz && $WEIR -q -19 --format=gzip in -o top.gz"
                        + " && $WEIR -q --format=gzip in -o default.gz && $WEIR -q -3 --format=gzip in -o three.gz"
                        + " && ln -s \"$WEIR\" gzip && ./gzip -k in && cmp default.gz three.gz", scratch)
        let sizes = ["one.gz", "three.gz", "in.gz", "top.gz"].map { scratch.data($0)?.count ?? 0 }
        #expect(sizes[0] > sizes[1] && sizes[1] > sizes[2] && sizes[2] >= sizes[3], "\(sizes)")
        #expect(try Self.sh("gzip -t one.gz top.gz in.gz && echo ok", scratch) == "ok\n")
    }

    @Test("called gzip, weir takes gzip's --best, --fast, -n and --no-name, as zstd does (its gzip-compat case)")
    func gzipFlags() throws {
        let scratch = Scratch()
        scratch.text("in", size: 300_000)
        let out = try Self.sh(
            """
            ln -s "$WEIR" gzip
            ./gzip -k --best in && mv in.gz best.gz && ./gzip -k -9 in && cmp in.gz best.gz && rm in.gz
            ./gzip -k --fast in && mv in.gz fast.gz && ./gzip -k -1 in && cmp in.gz fast.gz && rm in.gz
            for flag in -n --no-name; do ./gzip -k $flag in && gzip -t in.gz && rm in.gz; done
            ./gzip -c --no-name in | gzip -dc | cmp - in && echo ok
            """, scratch)
        #expect(out.hasSuffix("ok\n"), "\(out)")
        let plain = try WeirProcess.run(["--best", "in"], in: scratch.url)
        #expect(plain.status == 1 && plain.stderr.contains("--best"), "\(plain.stderr)")
    }

    @Test(
        "-d, -t, weircat and zstdcat read stock .gz, .tgz, .xz, .lzma and .lz4 files by magic, named as zstd names them"
    )
    func readByMagic() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 500_000)
        _ = try Self.sh(
            "gzip -c in > a.gz && gzip -c in > b.tgz && xz -c in > c.xz && xz -c --format=lzma in > d.lzma"
                + " && lz4 -q -c in > e.lz4 && cp a.gz renamed.zst", scratch)
        for (input, output) in [("a.gz", "a"), ("b.tgz", "b.tar"), ("c.xz", "c"), ("d.lzma", "d"), ("e.lz4", "e")] {
            let run = try WeirProcess.run(["-q", "-d", input], in: scratch.url)
            #expect(run.status == 0, "\(input): \(run.stderr)")
            #expect(scratch.data(output) == original, "\(input) → \(output)")
            #expect(try WeirProcess.run(["-q", "-t", input], in: scratch.url).status == 0, "\(input)")
        }
        let cat =
            "ln -s \"$WEIR\" weircat && ln -s \"$WEIR\" zstdcat && ./weircat renamed.zst | cmp - in"
            + " && ./zstdcat a.gz c.xz d.lzma e.lz4 in | cmp - <(cat in in in in in) && echo same"
        #expect(try Self.sh(cat, scratch) == "same\n")
    }

    @Test("an .lzma header asking for a 3 GiB dictionary is refused, naming the file, from a file and a pipe")
    func lzmaDictionaryBeyondLimit() throws {
        let scratch = Scratch()
        scratch.text("in", size: 200_000)
        _ = try Self.sh("xz -c --format=lzma in > a.lzma", scratch)
        var bytes = try #require(scratch.data("a.lzma"))
        // The header: a properties byte, then the dictionary size (little-endian), 3 GiB here.
        for (index, byte) in [UInt8(0x00), 0x00, 0x00, 0xC0].enumerated() { bytes[1 + index] = byte }
        try bytes.write(to: URL(fileURLWithPath: scratch.path("big.lzma")))
        for flags in [["-d"], ["-t"], ["-dc"], ["-d", "-T1"]] {
            let run = try WeirProcess.run(["-q"] + flags + ["big.lzma"], in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty, "\(flags): \(run.stderr)")
            #expect(run.stderr.hasPrefix("weir: big.lzma: "), "\(flags): \(run.stderr)")
        }
        let piped = try WeirProcess.shell("cat big.lzma | $WEIR -q -dc > out; echo \"status $?\" >&2", in: scratch.url)
        #expect(piped.stderr.hasSuffix("status 1\n") && scratch.data("out")?.isEmpty == true, "\(piped.stderr)")
        #expect(!scratch.exists("big") && scratch.names.filter { $0.hasPrefix(".") }.isEmpty, "\(scratch.names)")
        // The same stream with its own 8 MiB dictionary decodes.
        #expect(try WeirProcess.run(["-q", "-t", "a.lzma"], in: scratch.url).status == 0)
    }

    /// Runs `checks` (commands joined by &&, each a cmp) on an `in` of `size` bytes.
    static func allSame(_ checks: [String], size: Int) throws {
        let scratch = Scratch()
        scratch.text("in", size: size)
        #expect(try sh((checks + ["echo same"]).joined(separator: " && "), scratch) == "same\n")
    }

    @Test("weir's own .gz of many members decodes on -T1 and -T2, from a file and a pipe, also followed by zstd")
    func ownGzip() throws {
        try Self.allSame(
            [
                "$WEIR -q -T2 -B 128K --format=gzip in", "zstd -q -c in > in.zst", "cat in.gz in.zst > both",
                "$WEIR -dc -T2 in.gz | cmp - in", "$WEIR -dc -T1 in.gz | cmp - in", "$WEIR -dc < in.gz | cmp - in",
                "cat in.gz | $WEIR -dc -T2 | cmp - in", "$WEIR -dc -T2 both | cmp - <(cat in in)",
            ],
            size: 2_000_000)
    }

    @Test(
        "weir's own .lz4 and .xz of many frames decode on -T1 and -T2, from a file and a pipe, also followed by zstd",
        arguments: [("lz4", "lz4 -dc"), ("xz", "xz -dc")])
    func ownFrames(suffix: String, tool: String) throws {
        try Self.allSame(
            [
                "$WEIR -q -T2 -B 128K --format=\(suffix) in", "zstd -q -c in > in.zst",
                "cat in.\(suffix) in.zst > both", "$WEIR -dc -T2 in.\(suffix) | cmp - in",
                "$WEIR -dc -T1 in.\(suffix) | cmp - in", "$WEIR -dc < in.\(suffix) | cmp - in",
                "$WEIR -q -t -T2 in.\(suffix)", "\(tool) in.\(suffix) | cmp - in",
                "$WEIR -dc -T2 both | cmp - <(cat in in)",
            ],
            size: 2_000_000)
    }

    @Test(
        "-t -v counts the members of weir's own .gz, .lz4 and .xz as frames, decoded in parallel or not",
        arguments: ["gzip", "lz4", "xz"])
    func memberCount(format: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 2_000_000)
        let file = "in." + (format == "gzip" ? "gz" : format)
        _ = try Self.sh("$WEIR -q -T2 -B 128K --format=\(format) in", scratch)
        // 2,000,000 bytes in members of 128 KiB: 16 of them.
        for line in ["$WEIR -t -v -T2 \(file)", "$WEIR -t -v -T1 \(file)", "cat \(file) | $WEIR -t -v -T2"] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            #expect(run.status == 0 && run.stderr.contains(" 16 frames, "), "\(line): \(run.stderr)")
        }
    }

    @Test("frames of every format one after another in a pipe decode as one stream, as zstd decodes them")
    func mixed() throws {
        try Self.allSame(
            [
                "(gzip -c in; zstd -q -c in; $WEIR -q -c -B 64K --format=lz4 in; xz -c in; gzip -c in)"
                    + " | $WEIR -dc | cmp - <(cat in in in in in)"
            ], size: 300_000)
    }

    @Test(
        "zstd frames followed by gzip, xz, .lzma and lz4 decode as zstd 1.5.4 decodes them, every way in and out",
        arguments: ["zstd -q -c in", "$WEIR -q -c -T2 -B 64K in"])
    func afterZstd(zstd: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 400_000)
        _ = try Self.sh(
            "(\(zstd); gzip -c in; xz -c in; \(zstd); xz -c --format=lzma in; lz4 -q -c in) > m.zst"
                + " && cat in in in in in in > want && /usr/bin/zstd -dc m.zst | cmp - want", scratch)
        let checks = [
            "$WEIR -dc m.zst | cmp - want", "$WEIR -dc -T1 m.zst | cmp - want",
            "cat m.zst | $WEIR -dc | cmp - want", "$WEIR -q -t m.zst", "$WEIR -q -t < m.zst",
            "ln -s \"$WEIR\" zstdcat && ./zstdcat m.zst | cmp - want",
            "ln -s \"$WEIR\" weircat && ./weircat < m.zst | cmp - want",
            "$WEIR -q -d -k m.zst && cmp m want", "$WEIR -q -d -c < m.zst > piped && cmp piped want",
        ]
        #expect(try Self.sh((checks + ["echo same"]).joined(separator: " && "), scratch) == "same\n")
    }

    @Test("zstd frames then data of no format: an error after the frames' content is written, as zstd; -dcf copies it")
    func afterZstdGarbage() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 300_000)
        _ = try Self.sh(
            "$WEIR -q -c -T2 -B 64K in > z.zst && printf 'garbage!' >> z.zst"
                + " && (gzip -c in; printf 'garbage!') > g.gz", scratch)
        for (input, flags) in [("z.zst", ["-dc"]), ("z.zst", ["-dc", "-T1"]), ("g.gz", ["-dc"])] {
            let run = try WeirProcess.run(["-q"] + flags + [input], in: scratch.url)
            let zstd = try WeirProcess.shell("/usr/bin/zstd -q -dc \(input)", in: scratch.url)
            #expect(run.status == 1 && zstd.status == 1, "\(input): \(run.stderr)")
            #expect(run.stdout == original && zstd.stdout == original, "\(input) \(flags): \(run.stdout.count) bytes")
            #expect(run.stderr.contains("\(input): "), "\(run.stderr)")
        }
        let file = try WeirProcess.run(["-q", "-d", "z.zst", "-o", "out"], in: scratch.url)
        #expect(file.status == 1 && !scratch.exists("out"))
        // Pass-through copies what decodes no further, as zstd -dcf does.
        for line in [
            "$WEIR -dcf z.zst | cmp - <(/usr/bin/zstd -dcf z.zst)",
            "$WEIR -dcf g.gz | cmp - <(/usr/bin/zstd -dcf g.gz)",
            "$WEIR -d --pass-through -c < z.zst | cmp - <(cat in; printf 'garbage!')",
            "(cat z.zst; printf 'ab') | $WEIR -dcf | cmp - <(cat in; printf 'garbage!ab')",
        ] {
            #expect(try Self.sh(line + " && echo same", scratch) == "same\n", "\(line)")
        }
    }

    @Test("-l on .gz, .xz, .lz4 and frames followed by another format: zstd's line on stdout, exit status 1")
    func listOtherFormats() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        _ = try Self.sh(
            "gzip -k in && xz -k in && lz4 -q in in.lz4 && zstd -q in && (cat in.zst in.gz) > mixed.zst",
            scratch)
        for files in [["in.gz"], ["in.xz", "in.lz4"], ["mixed.zst"], ["in.gz", "in.zst"], ["-v", "in.xz"]] {
            let run = try WeirProcess.run(["-l"] + files, in: scratch.url)
            let zstd = try WeirProcess.shell("/usr/bin/zstd -l " + files.joined(separator: " "), in: scratch.url)
            #expect(run.status == 1 && zstd.status == 1, "\(files)")
            let out = String(decoding: run.stdout, as: UTF8.self)
            #expect(out == String(decoding: zstd.stdout, as: UTF8.self) || files.contains("-v"), "\(files): \(out)")
            let named = files.first { !$0.hasPrefix("-") }!
            #expect(
                out.contains("File \"\(named)\" not compressed by zstd \n") && run.stderr.isEmpty,
                "\(files): \(out) \(run.stderr)")
        }
    }

    @Test(
        "a damaged .gz, .xz or .lz4 fails naming the format's error and the file, and leaves no output",
        arguments: [
            ("gz", "gzip -c", "gzip: "), ("gz", "$WEIR -q -c -B 64K --format=gzip", "gzip: "),
            ("xz", "xz -c", "xz: "), ("lz4", "lz4 -q -c", "lz4: "),
            ("lz4", "$WEIR -q -c -B 64K --format=lz4", "lz4: "),
            ("xz", "$WEIR -q -c -B 64K --format=xz", "xz: "),
        ])
    func damaged(suffix: String, writer: String, named: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 400_000)
        // A run of bytes overwritten in the middle of the data.
        _ = try Self.sh(
            "\(writer) in > bad.\(suffix) && printf 'XXXXXXXXXXXXXXXX' | "
                + "dd of=bad.\(suffix) bs=1 seek=3000 conv=notrunc status=none", scratch)
        for flags in [["-d"], ["-t"], ["-dc"], ["-d", "-T2"]] {
            let run = try WeirProcess.run(["-q"] + flags + ["bad.\(suffix)"], in: scratch.url)
            #expect(run.status == 1, "\(flags)")
            #expect(run.stderr.contains("bad.\(suffix): ") && run.stderr.contains(named), "\(flags): \(run.stderr)")
        }
        #expect(!scratch.exists("bad") && scratch.names.filter { $0.hasPrefix(".") }.isEmpty, "\(scratch.names)")
        // Cut short: truncated, in the format's words.
        _ = try Self.sh("\(writer) in | head -c 5000 > short.\(suffix)", scratch)
        let short = try WeirProcess.run(["-q", "-d", "short.\(suffix)"], in: scratch.url)
        #expect(short.status == 1 && short.stderr.contains("short.\(suffix): truncated input"), "\(short.stderr)")
        #expect(!scratch.exists("short"))
    }

    @Test(
        "a gzip trailer that lies reads the same from a file and a pipe: its length, or its data check (issue 59)",
        arguments: [
            ("gzip -c", 4, "incorrect length check"), ("gzip -c", 8, "incorrect data check"),
            ("$WEIR -q -c -B 64K --format=gzip", 4, "incorrect length check"),
            ("$WEIR -q -c -B 64K --format=gzip", 8, "incorrect data check"),
        ])
    func lyingTrailer(writer: String, fromEnd: Int, message: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 300_000)
        // The last member's trailer: CRC-32 (8 bytes from the end), then ISIZE (4).
        _ = try Self.sh("\(writer) in > bad.gz", scratch)
        var bytes = try #require(scratch.data("bad.gz"))
        bytes[bytes.count - fromEnd] ^= 0x01
        _ = FileManager.default.createFile(atPath: scratch.path("bad.gz"), contents: bytes)
        for line in ["$WEIR -dc bad.gz", "$WEIR -dc -T1 bad.gz", "cat bad.gz | $WEIR -dc", "$WEIR -t bad.gz"] {
            let run = try WeirProcess.shell(line + " > /dev/null", in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("gzip: \(message)"), "\(line): \(run.stderr)")
        }
    }
}