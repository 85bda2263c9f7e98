import Foundation
import Testing

/// `--long[=N]`: long-distance matching over chunks as large as the window,
/// and the window a decoder accepts, against the real zstd.
@Suite("weir --long")
struct LongCommandTests {
    /// 3 MiB of random bytes twice over: only a match 3 MiB back finds the
    /// second half.
    /// Made by the shell: drawn a byte at a time (`UInt8.random`) in the
    /// unoptimized test build, 3 MiB took a system call a byte.
    static func repeated(_ scratch: Scratch) throws -> Data {
        let made = try WeirProcess.shell("head -c \(3 << 20) /dev/urandom > half && cat half half > in && rm half",
                                         in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let data = try #require(scratch.data("in"))
        try #require(data.count == 6 << 20 && data.prefix(3 << 20) == data.suffix(3 << 20))
        return data
    }

    @Test("--long=23 finds a match 3 MiB back across what were two frames; zstd -d --long=23 decodes it")
    func longMatches() throws {
        let scratch = Scratch()
        let original = try Self.repeated(scratch)
        // Without --long, two workers cut 6 MiB into two independent frames.
        let plain = try WeirProcess.run(["-q", "-T2", "in", "-o", "plain.zst"], in: scratch.url)
        #expect(plain.status == 0, "\(plain.stderr)")
        let long = try WeirProcess.run(["-q", "-T2", "--long=23", "in", "-o", "long.zst"], in: scratch.url)
        #expect(long.status == 0, "\(long.stderr)")
        let plainSize = try #require(scratch.data("plain.zst")).count
        let longSize = try #require(scratch.data("long.zst")).count
        #expect(plainSize > original.count * 95 / 100)
        #expect(longSize < original.count * 55 / 100, "\(longSize) bytes")
        #expect(try scratch.zstd(["-dc", "--long=23", "long.zst"]).stdout == original)
        #expect(try WeirProcess.run(["-q", "-dc", "long.zst"], in: scratch.url).stdout == original)
        // From a pipe too (chunks of 8 MiB, raised to the window).
        let piped = try WeirProcess.shell(
            "cat in | $WEIR -q -T2 --long=23 | zstd -q -dc --long=23 | cmp - in && echo same",
            in: scratch.url)
        #expect(String(decoding: piped.stdout, as: UTF8.self) == "same\n", "\(piped.stderr)")
    }

    @Test("a --long file's frames declare their size: stock zstd -d and weir -d decode them without --long")
    func decodedWithoutLong() throws {
        let scratch = Scratch()
        let original = try Self.repeated(scratch)
        for window in ["--long=27", "--long=30", "--long=31"] {
            let run = try WeirProcess.run(["-q", "-f", "-T2", window, "in", "-o", "long.zst"], in: scratch.url)
            #expect(run.status == 0, "\(window): \(run.stderr)")
            let stock = try scratch.zstd(["-q", "-dc", "long.zst"])
            #expect(stock.status == 0 && stock.stdout == original, "\(window): \(stock.stderr)")
            let weir = try WeirProcess.run(["-q", "-dc", "long.zst"], in: scratch.url)
            #expect(weir.status == 0 && weir.stdout == original, "\(window): \(weir.stderr)")
        }
    }

    @Test("--long alone is --long=27: a 128 MiB chunk for a stream, and a small file is one frame of its size")
    func defaultWindow() throws {
        let scratch = Scratch()
        scratch.text("in", size: 100_000)
        // A pipe has no size to fit the chunk to: the chunk is the window's.
        let piped = try WeirProcess.shell("cat in | $WEIR --json --long > piped.zst", in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.contains("\"chunk_bytes\":134217728"), "\(piped.stderr)")
        let explicit = try WeirProcess.shell("cat in | $WEIR --json --long=20 > piped.zst", in: scratch.url)
        #expect(
            explicit.stderr.contains("\"chunk_bytes\":8388608"), "a window below the chunk keeps it: \(explicit.stderr)"
        )
        // A file smaller than the window: one chunk of its size in 64 KiB.
        let file = try WeirProcess.run(["--json", "--long", "in", "-o", "in.zst"], in: scratch.url)
        #expect(file.status == 0, "\(file.stderr)")
        #expect(
            file.stderr.contains("\"chunk_bytes\":131072") && file.stderr.contains("\"frames\":1"), "\(file.stderr)")
    }

    @Test("--json's window_log is the window the frames declare: zstd -lv shows the same, a zstd stream's is read back")
    func windowLogReported() throws {
        let scratch = Scratch()
        _ = try Self.repeated(scratch)
        let long = try WeirProcess.run(["--json", "-T2", "--long=23", "in", "-o", "long.zst"], in: scratch.url)
        #expect(long.status == 0, "\(long.stderr)")
        // One 6 MiB frame, whose window is its content: 2^23 holds it.
        let listing = String(decoding: try scratch.zstd(["-lv", "long.zst"]).stdout, as: UTF8.self)
        let window = try #require(
            listing.firstMatch(of: /Window Size: .*\((\d+) B\)/).flatMap { Int($0.1) }, "\(listing)")
        #expect(window > 1 << 22 && window <= 1 << 23, "\(listing)")
        #expect(long.stderr.contains("\"window_log\":23"), "\(long.stderr)")
        // zstd from a pipe writes no content size: the window descriptor says 2^22.
        let decoded = try WeirProcess.shell(
            "cat in | zstd -q --long=22 -c > z.zst && $WEIR --json -d -c z.zst > out && cmp out in",
            in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stderr.contains("\"window_log\":22"), "\(decoded.stderr)")
    }

    @Test("a window log outside 10…31 is a usage error, as in zstd")
    func range() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1000)
        for value in ["9", "32"] {
            let result = try WeirProcess.run(["--long=\(value)", "in"], in: scratch.url)
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("--long=\(value): the window log must be between 10 and 31."), "\(result.stderr)"
            )
            #expect(try scratch.zstd(["-q", "--long=\(value)", "-c", "in"]).status != 0)
        }
        #expect(!scratch.exists("in.zst"))
    }

    @Test("weir -d refuses a window above the limit with zstd's hint, and --long=N or -M lets it through")
    func windowRefusedWithHint() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 200_000)
        // From a pipe, zstd --long=28 writes a frame asking for a 256 MiB window.
        let made = try WeirProcess.shell("cat in | zstd -q --long=28 > big.zst", in: scratch.url)
        #expect(made.status == 0)
        let refused = try WeirProcess.run(["-d", "big.zst", "-o", "out"], in: scratch.url)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "weir: big.zst: frame 0 at offset 0 needs a window of 268435456 bytes, more than "
                    + "the default memory limit of 134217728 bytes (use --long=28 or -M256M)"),
            "\(refused.stderr)")
        #expect(!scratch.exists("out"))
        #expect(try scratch.zstd(["-q", "-d", "big.zst", "-o", "out"]).status != 0, "zstd refuses it too")
        #expect(try WeirProcess.run(["-q", "-dc", "--long=28", "big.zst"], in: scratch.url).stdout == original)
        #expect(try WeirProcess.run(["-q", "-dc", "-M256M", "big.zst"], in: scratch.url).stdout == original)
        let piped = try WeirProcess.shell(
            "cat big.zst | $WEIR -q -d --long=28 | cmp - in && echo same", in: scratch.url)
        #expect(String(decoding: piped.stdout, as: UTF8.self) == "same\n", "\(piped.stderr)")
        // --long=27 is not enough; -M, given, wins over --long as in zstd.
        #expect(try WeirProcess.run(["-q", "-dc", "--long=27", "big.zst"], in: scratch.url).status == 1)
        #expect(try WeirProcess.run(["-q", "-dc", "--long=28", "-M1M", "big.zst"], in: scratch.url).status == 1)

        // weir's own frames: one 6 MiB frame under --long=23 needs -M6M or --long=23.
        _ = try Self.repeated(scratch)
        try WeirProcess.run(["-q", "-f", "--long=23", "in", "-o", "long.zst"], in: scratch.url)
        let small = try WeirProcess.run(["-d", "-M4M", "long.zst", "-o", "out"], in: scratch.url)
        #expect(small.status == 1)
        #expect(small.stderr.contains("needs a window of 6291456 bytes, more than the memory limit of 4194304 bytes "
                                      + "(use --long=23 or -M6M)"), "\(small.stderr)")
        #expect(try WeirProcess.run(["-q", "-t", "--long=23", "long.zst"], in: scratch.url).status == 0)
    }
}
