import Foundation
import Testing

/// `weir --index --index-from=TAR FILE`: the member index of FILE's frames
/// made from TAR, the tar they hold, instead of decoding FILE (weir.dask's
/// join, issue 82); TAR taken only when its size and every frame's content
/// checksum match.
@Suite("weir --index --index-from")
struct IndexFromCommandTests {
    /// A tar of 300 files and their folder (1.6 MB: 25 frames of 64 KiB,
    /// cheap at -19 too), in `a.tar`.
    static func makeTar(_ scratch: Scratch) throws {
        scratch.text("words", size: 9_300)
        let make = "mkdir tree && for i in $(seq 1 300); do head -c $((i * 31)) words > tree/f$i; done"
            + " && tar -cf a.tar tree"
        #expect(try WeirProcess.shell(make, in: scratch.url).status == 0)
    }

    /// The tar's frames as weir.dask's tasks write them: two ranges of it,
    /// cut at a frame's edge, each piped into `weir -c --no-seek-table -B
    /// 64K`, the parts concatenated into `name`, with no table and no index.
    static func joinFrames(_ scratch: Scratch, into name: String, flags: [String] = []) throws {
        let size = try #require(scratch.data("a.tar")).count
        let cut = size / 2 / 65_536 * 65_536
        let weir = "$WEIR -c -q --no-seek-table -B 64K --stream-size="
        let extra = flags.joined(separator: " ")
        let command = "head -c \(cut) a.tar | \(weir)\(cut) \(extra) > \(name)"
            + " && tail -c +\(cut + 1) a.tar | \(weir)\(size - cut) \(extra) >> \(name)"
        let run = try WeirProcess.shell(command, in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test(
        """
        joined frames indexed from their tar: the bytes of weir -3 SRC and, at -19 (or WEIR_CLEVEL=19), of weir \
        -19 SRC, the same as the decode's; the line says the headers were read from TAR
        """,
        arguments: [[], ["-19"]])
    func sameBytes(level: [String]) throws {
        let scratch = Scratch()
        try Self.makeTar(scratch)
        try Self.joinFrames(scratch, into: "fast.tar.zst", flags: level)
        try Self.joinFrames(scratch, into: "decoded.tar.zst", flags: level)
        let reference = try WeirProcess.run(["-q", "-B", "64K"] + (level.isEmpty ? ["-3"] : level)
                                            + ["a.tar", "-o", "ref.tar.zst"], in: scratch.url)
        #expect(reference.status == 0, "\(reference.stderr)")
        let fast = try WeirProcess.run(["--index"] + level + ["--index-from=a.tar", "fast.tar.zst"], in: scratch.url)
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(fast.stderr.hasPrefix("fast.tar.zst: member index of 301 members and seek table of ")
                    && fast.stderr.hasSuffix("; the headers read from a.tar)\n"), "\(fast.stderr)")
        let decoded = try WeirProcess.run(["--index"] + level + ["decoded.tar.zst"], in: scratch.url)
        #expect(decoded.status == 0 && decoded.stderr.contains("the content decoded once"), "\(decoded.stderr)")
        let made = try #require(scratch.data("fast.tar.zst"))
        #expect(made == scratch.data("ref.tar.zst"))
        #expect(made == scratch.data("decoded.tar.zst"))
        try MemberIndexCommandTests.expectIndex("fast.tar.zst", of: "a.tar", in: scratch)
        guard !level.isEmpty else { return }
        // The level from the environment, as a compression takes it.
        try Self.joinFrames(scratch, into: "env.tar.zst", flags: level)
        let environment = try WeirProcess.shell("WEIR_CLEVEL=19 $WEIR -q --index --index-from=a.tar env.tar.zst",
                                                in: scratch.url)
        #expect(environment.status == 0, "\(environment.stderr)")
        #expect(scratch.data("env.tar.zst") == made)
    }

    @Test("parts that end with their own seek tables (GNU parallel's recipe): the bytes of the decode's --index")
    func partsWithTables() throws {
        let scratch = Scratch()
        try Self.makeTar(scratch)
        let size = try #require(scratch.data("a.tar")).count
        let cut = size / 3
        let parts = "head -c \(cut) a.tar | $WEIR -c -q -B 64K > t.tar.zst"
            + " && tail -c +\(cut + 1) a.tar | $WEIR -c -q -B 64K >> t.tar.zst && cp t.tar.zst d.tar.zst"
        #expect(try WeirProcess.shell(parts, in: scratch.url).status == 0)
        let fast = try WeirProcess.run(["--index", "--index-from=a.tar", "t.tar.zst"], in: scratch.url)
        #expect(fast.status == 0 && fast.stderr.contains("the headers read from a.tar"), "\(fast.stderr)")
        let decoded = try WeirProcess.run(["-q", "--index", "d.tar.zst"], in: scratch.url)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(scratch.data("t.tar.zst") == scratch.data("d.tar.zst"))
        try MemberIndexCommandTests.expectIndex("t.tar.zst", of: "a.tar", in: scratch)
    }

    @Test(
        """
        refused, exit 1, the file unchanged byte for byte: a TAR of the same size with one byte changed (the frame \
        named), a TAR of another size, frames without checksums (--no-check), a TAR that is not a regular file (a \
        folder, a FIFO no one writes to)
        """)
    func refusesWhatDoesNotMatch() throws {
        let scratch = Scratch()
        try Self.makeTar(scratch)
        try Self.joinFrames(scratch, into: "j.tar.zst")
        try Self.joinFrames(scratch, into: "unchecked.tar.zst", flags: ["--no-check"])
        var changed = try #require(scratch.data("a.tar"))
        // In frame 10's range (64 KiB frames): the file's frame 10, at a
        // part's frames, none skippable before it.
        changed[10 * 65_536 + 100] ^= 0x20
        try changed.write(to: scratch.url.appendingPathComponent("changed.tar"))
        try changed.dropLast(512).write(to: scratch.url.appendingPathComponent("short.tar"))
        // A FIFO no one writes to: refused, not waited on.
        #expect(try WeirProcess.shell("mkfifo fifo", in: scratch.url).status == 0)
        let cases: [(file: String, tar: String, message: String)] = [
            ("j.tar.zst", "changed.tar", "weir: changed.tar: bytes 655360 to 720896 are not the content of frame 10 "
                + "at offset "),
            ("j.tar.zst", "short.tar", "weir: short.tar: is \(changed.count - 512) bytes, but the frames of j.tar.zst "
                + "hold \(changed.count) bytes of content; not indexed"),
            ("unchecked.tar.zst", "a.tar", "weir: unchecked.tar.zst: frame 0 at offset 0 stores no content checksum, "
                + "so a.tar cannot be checked against it as its content; not indexed"),
            ("j.tar.zst", ".", "weir: .: not a regular file"),
            ("j.tar.zst", "fifo", "weir: fifo: not a regular file"),
        ]
        for (file, tar, message) in cases {
            let before = try #require(scratch.data(file))
            let run = try WeirProcess.run(["--index", "--index-from=\(tar)", file], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains(message), "\(tar): \(run.stderr)")
            #expect(scratch.data(file) == before, "\(tar)")
        }
        let changedRun = try WeirProcess.run(["--index", "--index-from=changed.tar", "j.tar.zst"], in: scratch.url)
        #expect(changedRun.stderr.hasSuffix("(its content checksum differs); not indexed\n"), "\(changedRun.stderr)")
    }

    @Test("the parser refuses --index-from without --index, with two files, with -, with --no-member-index")
    func usage() throws {
        let scratch = Scratch()
        try Self.makeTar(scratch)
        try Self.joinFrames(scratch, into: "j.tar.zst")
        try Self.joinFrames(scratch, into: "k.tar.zst")
        let cases: [([String], String)] = [
            (["--index-from=a.tar", "j.tar.zst"], "it goes with --index"),
            (["-d", "--index-from=a.tar", "j.tar.zst"], "it goes with --index"),
            (["--index", "--index-from=a.tar", "j.tar.zst", "k.tar.zst"], "give --index exactly one FILE"),
            (["--index", "--index-from=-", "j.tar.zst"], "not standard input"),
            (["--index", "--no-member-index", "--index-from=a.tar", "j.tar.zst"], "--no-member-index"),
        ]
        for (arguments, message) in cases {
            let before = try #require(scratch.data("j.tar.zst"))
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains(message) && run.stderr.contains("Usage:"),
                    "\(arguments): \(run.stderr)")
            #expect(scratch.data("j.tar.zst") == before, "\(arguments)")
        }
    }

    @Test("a TAR that is not a tar (and its frames): the seek table alone, as weir SRC writes for it")
    func notTar() throws {
        let scratch = Scratch()
        scratch.text("a.tar", size: 1_000_000)
        try Self.joinFrames(scratch, into: "j.zst")
        let run = try WeirProcess.run(["--index", "--index-from=a.tar", "j.zst"], in: scratch.url)
        #expect(run.status == 0 && run.stderr.contains("j.zst: seek table of "), "\(run.stderr)")
        #expect(try MemberIndexCommandTests.index("j.zst", in: scratch) == nil)
        let reference = try WeirProcess.run(["-q", "-B", "64K", "a.tar", "-o", "ref.zst"], in: scratch.url)
        #expect(reference.status == 0, "\(reference.stderr)")
        #expect(scratch.data("j.zst") == scratch.data("ref.zst"))
    }

    @Test("""
          SIGINT or SIGTERM while --index appends (with --index-from or decoding): the append ends whole, then \
          weir exits 128 + the signal; the file is never left half appended
          """)
    func signalDuringAppend() throws {
        let scratch = Scratch()
        // 60,000 members: an append of ~400 KB, long enough for a signal to land inside its write.
        let script = """
            import io, os, shutil, signal, subprocess, tarfile
            weir = os.environ["WEIR"]
            with tarfile.open("m.tar", "w", format=tarfile.GNU_FORMAT) as t:
                for i in range(60000):
                    info = tarfile.TarInfo(f"d{i // 1000}/f{i}")
                    info.size = 3
                    t.addfile(info, io.BytesIO(b"abc"))
            subprocess.run([weir, "-q", "-1", "-B", "8M", "--no-seek-table", "m.tar", "-o", "base.zst"], check=True)
            shutil.copy("base.zst", "whole.zst")
            subprocess.run([weir, "-q", "--index", "whole.zst"], check=True)
            before, whole = os.path.getsize("base.zst"), open("whole.zst", "rb").read()
            for round in range(8):
                shutil.copy("base.zst", "s.zst")
                flags = ["--index-from=m.tar"] if round % 2 else []
                p = subprocess.Popen([weir, "-q", "--index", *flags, "s.zst"])
                while p.poll() is None:
                    if os.path.getsize("s.zst") != before:
                        p.send_signal(signal.SIGINT if round % 4 < 2 else signal.SIGTERM)
                        break
                status = p.wait()
                now = open("s.zst", "rb").read()
                state = "whole" if now == whole else "unchanged" if len(now) == before else f"half {len(now)}"
                print(round, status, state)
            """
        try Data(script.utf8).write(to: scratch.url.appendingPathComponent("signals.py"))
        let run = try WeirProcess.shell("python3 signals.py", in: scratch.url, timeout: 240)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 8, "\(run.stdout)")
        for line in lines {
            let fields = line.split(separator: " ")
            #expect(fields.count == 3 && ["whole", "unchanged"].contains(String(fields[2])), "\(line)")
            #expect(["0", "130", "143"].contains(String(fields[1])), "\(line)")
        }
    }
}
