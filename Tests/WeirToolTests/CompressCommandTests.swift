import Foundation
import Testing
import Glibc

/// `weir FILE`, `-c`, `-o`, stdin → stdout, levels and flags, as a user runs them.
@Suite("weir compress")
struct CompressCommandTests {
    @Test("FILE becomes FILE.zst, the input is kept, and stock zstd -d decodes it")
    func compressFile() throws {
        let scratch = Scratch()
        let original = scratch.text("notes.txt", size: 3_000_000)
        let result = try WeirProcess.run(["notes.txt"], in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(scratch.data("notes.txt") == original)
        #expect(scratch.exists("notes.txt.zst"))
        #expect(result.stderr.hasPrefix("notes.txt: "))
        #expect(result.stderr.contains("=> "))
        #expect(result.stdout.isEmpty)
        let decoded = try scratch.zstd(["-dc", "notes.txt.zst"])
        #expect(decoded.status == 0)
        #expect(decoded.stdout == original)
        #expect(scratch.names == ["notes.txt", "notes.txt.zst"])
        let verbose = try WeirProcess.run(["-v", "-f", "notes.txt"], in: scratch.url)
        #expect(verbose.stderr.contains(", cpu "))
        #expect(verbose.stderr.contains("peak memory"))
    }

    @Test("stdin to stdout through pipes, and -q prints nothing")
    func pipes() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_500_000)
        let result = try WeirProcess.shell(
            "cat in | $WEIR -q --chunk-size 256K | zstd -dc | cmp - in && echo same", in: scratch.url)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "same\n")
        #expect(original.count == 2_500_000)
    }

    @Test("stdin redirected from a file starts where the shell left it and leaves the offset at the end",
          arguments: ["--mmap", "--no-mmap"])
    func sharedFileOffset(reading: String) throws {
        let scratch = Scratch()
        scratch.text("in", size: 3_000_000)
        // bash's `read` stops after the first line and seeks the shared
        // descriptor back there; weir must compress the rest, and `cat` after
        // it must find nothing left.
        let result = try WeirProcess.shell(
            """
            { IFS= read -r first; $WEIR -q \(reading) -T2 > rest.zst; cat > after; } < in
            tail -n +2 in > expected
            """, in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try scratch.zstd(["-dc", "rest.zst"]).stdout == scratch.data("expected"))
        #expect(scratch.data("after")?.isEmpty == true)
    }

    @Test("one frame per chunk; the chunk size and the levels take effect")
    func chunksAndLevels() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1_000_000)
        #expect(
            try WeirProcess.run(["-q", "--chunk-size", "100KiB", "in", "-o", "a.zst"], in: scratch.url).status == 0)
        let list = try scratch.zstd(["-l", "a.zst"])
        let row = String(decoding: list.stdout, as: UTF8.self).split(separator: "\n")[1]
        #expect(row.split(separator: " ").first == "11")  // 1,000,000 / 102,400 → 10 frames, and the seek table
        #expect(row.contains("XXH64"))

        for (flags, name) in [
            (["-1"], "l1"), (["-19"], "l19"), (["--fast=5"], "fast"), (["--ultra", "-22"], "l22"),
            (["--no-check"], "nocheck"), (["-T1"], "t1"), (["-T0"], "t0"),
        ] {
            let run = try WeirProcess.run(["-q"] + flags + ["in", "-o", name], in: scratch.url)
            #expect(run.status == 0, "\(flags): \(run.stderr)")
            #expect(try scratch.zstd(["-dc", name]).stdout == scratch.data("in"))
        }
        let sizes = ["l1", "l19", "fast"].map { scratch.data($0)!.count }
        #expect(sizes[1] < sizes[0])
        #expect(sizes[0] < sizes[2])
        let noCheck = String(decoding: try scratch.zstd(["-l", "nocheck"]).stdout, as: UTF8.self)
        #expect(!noCheck.contains("XXH64"))
    }

    @Test("a file smaller than one chunk per worker is cut into one frame per worker, unless --chunk-size is given")
    func smallFilesUseEveryWorker() throws {
        let scratch = Scratch()
        scratch.text("in", size: 5_000_000)
        func frames(_ flags: [String]) throws -> Int {
            let name = "out\(flags.joined()).zst"
            let run = try WeirProcess.run(["-q", "--no-seek-table"] + flags + ["in", "-o", name], in: scratch.url)
            #expect(run.status == 0, "\(flags): \(run.stderr)")
            #expect(try scratch.zstd(["-dc", name]).stdout == scratch.data("in"))
            let row = String(decoding: try scratch.zstd(["-l", name]).stdout, as: UTF8.self).split(separator: "\n")[1]
            return Int(row.split(separator: " ").first ?? "") ?? -1
        }
        #expect(try frames(["-T1"]) == 1)
        #expect(try frames(["-T2"]) == 2)
        #expect(try frames(["-T3"]) == 3)
        #expect(try frames(["-T2", "--chunk-size", "8MiB"]) == 1)
        // Never below 1 MiB a frame: 5 MB on 8 workers is 5 frames.
        #expect(try frames(["-T8"]) == 5)
    }

    @Test("levels above the maximum are clamped with a warning; bad values are refused")
    func levelLimits() throws {
        let scratch = Scratch()
        scratch.text("in", size: 10_000)
        let clamped = try WeirProcess.run(["-22", "in", "-o", "x.zst"], in: scratch.url)
        #expect(clamped.status == 0)
        #expect(
            clamped.stderr.contains("warning: compression level 22 is above the maximum 19 without --ultra; using 19"))
        for bad in [["--fast=0"], ["-T", "-1"], ["--chunk-size", "12Q"], ["--chunk-size", "10"], ["-T", "999"]] {
            let run = try WeirProcess.run(bad + ["in"], in: scratch.url)
            #expect(run.status != 0, "\(bad)")
            #expect(run.stderr.contains("Error"), "\(bad): \(run.stderr)")
        }
        // Past 32 bits a level is refused, not clamped, as zstd refuses it (zstd's own tests check it).
        for huge in ["-5000000000", "--fast=5000000000", "--fast=9999999999"] {
            let run = try WeirProcess.run([huge, "-c", "in"], in: scratch.url)
            #expect(run.status == 1, "\(huge)")
            #expect(run.stderr.contains("overflows a 32-bit unsigned int"), "\(huge): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(try scratch.zstd([huge, "-c", "in"]).status != 0)
        }
        let widest = try WeirProcess.run(["--fast=4294967295", "-c", "in"], in: scratch.url)
        #expect(widest.status == 0, "\(widest.stderr)")
    }

    @Test("--level N and --level=N are -N; above 19 without --ultra, lowered to it with a warning")
    func levelFlag() throws {
        let scratch = Scratch()
        scratch.text("in", size: 300_000)
        for (flags, name) in [
            (["-19"], "short.zst"), (["--level", "19"], "long.zst"), (["--level=19"], "equals.zst"),
            (["-3"], "three.zst"),
        ] {
            let run = try WeirProcess.run(["-q", "-T1"] + flags + ["in", "-o", name], in: scratch.url)
            #expect(run.status == 0, "\(flags): \(run.stderr)")
        }
        #expect(scratch.data("long.zst") == scratch.data("short.zst"))
        #expect(scratch.data("equals.zst") == scratch.data("short.zst"))
        #expect(scratch.data("three.zst") != scratch.data("short.zst"))
        let above = try WeirProcess.run(["-T1", "--level", "20", "in", "-o", "above.zst"], in: scratch.url)
        #expect(above.status == 0 && above.stderr.contains("level 20 is above the maximum 19"), "\(above.stderr)")
        #expect(scratch.data("above.zst") == scratch.data("short.zst"))
    }

    @Test("-q keeps warnings and hides the summary; -qq hides the warnings too, and the work is the same")
    func quietWarnings() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 10_000)
        let warning = "warning: compression level 22 is above the maximum 19 without --ultra; using 19"
        let quiet = try WeirProcess.run(["-q", "-22", "in", "-o", "q.zst"], in: scratch.url)
        #expect(quiet.status == 0 && quiet.stderr.contains(warning), "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("q.zst)"), "\(quiet.stderr)")
        for flags in [["-qq"], ["-q", "-q"]] {
            let quieter = try WeirProcess.run(flags + ["-22", "in", "-o", "qq.zst", "-f"], in: scratch.url)
            #expect(quieter.status == 0 && quieter.stderr.isEmpty, "\(flags): \(quieter.stderr)")
            #expect(try scratch.zstd(["-dc", "qq.zst"]).stdout == original)
            #expect(scratch.data("qq.zst") == scratch.data("q.zst"))
        }
    }

    @Test("-c writes to stdout; -o names the output; the last of -c and -o wins")
    func destinations() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 100_000)
        let toStdout = try WeirProcess.run(["-c", "in"], in: scratch.url, stdoutPath: "c.zst")
        #expect(toStdout.status == 0)
        #expect(try scratch.zstd(["-dc", "c.zst"]).stdout == original)
        #expect(!scratch.exists("in.zst"))

        #expect(try WeirProcess.run(["-c", "-o", "o.zst", "in"], in: scratch.url).status == 0)
        #expect(scratch.exists("o.zst"))
        let last = try WeirProcess.run(["-o", "never.zst", "-c", "in"], in: scratch.url, stdoutPath: "last.zst")
        #expect(last.status == 0)
        #expect(!scratch.exists("never.zst"))
        #expect(try scratch.zstd(["-dc", "last.zst"]).stdout == original)
    }

    @Test("several files with -c concatenate; a missing one does not stop the others")
    func severalFiles() throws {
        let scratch = Scratch()
        let a = scratch.text("a", size: 50_000, seed: 1)
        let b = scratch.text("b", size: 70_000, seed: 2)
        let both = try WeirProcess.run(["-c", "a", "b"], in: scratch.url, stdoutPath: "ab.zst")
        #expect(both.status == 0)
        #expect(try scratch.zstd(["-dc", "ab.zst"]).stdout == a + b)

        let partial = try WeirProcess.run(["a", "missing", "b"], in: scratch.url)
        #expect(partial.status == 1)
        #expect(partial.stderr.contains("weir: missing: open failed: No such file or directory"))
        #expect(scratch.exists("a.zst") && scratch.exists("b.zst"))
    }

    @Test("permission bits and modification time are copied; --rm removes the input after success")
    func metadataAndRemove() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 20_000)
        chmod(scratch.path("in"), 0o604)
        var times = [timespec(tv_sec: 1_500_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, scratch.path("in"), &times, 0)
        #expect(try WeirProcess.run(["--rm", "in"], in: scratch.url).status == 0)
        #expect(!scratch.exists("in"))
        var info = stat()
        #expect(stat(scratch.path("in.zst"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o604)
        #expect(info.st_mtim.tv_sec == 1_600_000_000)
        #expect(try WeirProcess.run(["-d", "in.zst"], in: scratch.url).status == 0)
        #expect(scratch.data("in") == original)
        #expect(stat(scratch.path("in"), &info) == 0)
        #expect(info.st_mtim.tv_sec == 1_600_000_000)
    }

    @Test("-V prints weir's and libzstd's versions; -h lists the flags")
    func versionAndHelp() throws {
        let scratch = Scratch()
        let version = String(decoding: try WeirProcess.run(["-V"], in: scratch.url).stdout, as: UTF8.self)
        #expect(version.hasPrefix("weir "))
        #expect(version.contains("libzstd 1."))
        let help = String(decoding: try WeirProcess.run(["-h"], in: scratch.url).stdout, as: UTF8.self)
        for flag in [
            "--decompress", "--stdout", "--output", "--force", "--rm", "--ultra", "--fast", "--threads",
            "--chunk-size", "--check", "--memory", "--quiet", "--verbose", "--version", "--test",
        ] {
            #expect(help.contains(flag), "help lacks \(flag)")
        }
    }
}

@Suite("weir --rsyncable")
struct RsyncableCommandTests {
    /// The zstd frames of a compressed file, as `weir -lv` lists them.
    func frames(_ name: String, in scratch: Scratch) throws -> [Data] {
        let listing = try WeirProcess.run(["-lv", name], in: scratch.url)
        #expect(listing.status == 0, "\(listing.stderr)")
        let file = try #require(scratch.data(name))
        return String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields.last == "zstd", let offset = Int(fields[1]), let size = Int(fields[2])
            else { return nil }
            return file.subdata(in: offset..<offset + size)
        }
    }

    @Test("a byte inserted near the start leaves the later frames byte-identical; zstd decodes the output")
    func insertion() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000, seed: 5)
        var changed = original
        changed.insert(0x21, at: 20_000)
        _ = FileManager.default.createFile(atPath: scratch.path("b"), contents: changed)
        for name in ["a", "b"] {
            let run = try WeirProcess.run(["-q", "--rsyncable", "--chunk-size", "64KiB", name], in: scratch.url)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try scratch.zstd(["-d", "-f", name + ".zst", "-o", name + ".out"]).status == 0)
            #expect(scratch.data(name + ".out") == (name == "a" ? original : changed))
        }
        let before = try frames("a.zst", in: scratch), after = try frames("b.zst", in: scratch)
        #expect(before.count > 25)
        let unchanged = Set(before).intersection(after)
        #expect(Double(unchanged.count) >= 0.95 * Double(before.count), "\(unchanged.count) of \(before.count)")

        // Without it, every frame after the insertion shifts.
        for name in ["a", "b"] {
            #expect(try WeirProcess.run(["-q", "-f", "--chunk-size", "64KiB", name], in: scratch.url).status == 0)
        }
        let fixed = Set(try frames("a.zst", in: scratch)).intersection(try frames("b.zst", in: scratch))
        #expect(fixed.count < 2)
    }
}