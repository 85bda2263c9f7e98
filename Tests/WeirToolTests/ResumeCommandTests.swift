import Foundation
import Testing

/// A file-to-file compression that is stopped keeps what is on disk as
/// `NAME.part` (with `.NAME.part.resume`), and the same command finishes it.
@Suite("weir resume")
struct ResumeCommandTests {
    /// The command every test runs: 1 MiB frames, made slow enough to be
    /// stopped after its first checkpoint by the test builds' hooks (a
    /// pause after each chunk read, a checkpoint every 0.1 s rather than
    /// every 2 s) instead of by level 19's CPU (issue 69: the inner loop).
    static let command = "\(slow) $WEIR -3 -B1M -T2 in -o in.zst"
    /// The hooks that slow ``command`` (test builds only).
    static let slow = "WEIR_TEST_FRAME_DELAY=0.08 WEIR_TEST_CHECKPOINT_INTERVAL=0.1"
    static let scenario = ResumeScenario(command: command, input: "in", output: "in.zst")

    /// The input (16 MB of text: 16 frames, twice the fewest a run resumes
    /// with) and the output of an uninterrupted run of ``command``, made once
    /// for every test.
    static let reference: (input: Data, output: Data?) = {
        let scratch = Scratch()
        let input = scratch.text("in", size: 16_000_000, seed: 5)
        let run = try? WeirProcess.shell("$WEIR -q -3 -B1M -T2 --no-resume in -o ref.zst", in: scratch.url,
                                         timeout: 300)
        return (input, run?.status == 0 ? scratch.data("ref.zst") : nil)
    }()

    /// A folder with `in` and `ref.zst`, the uninterrupted output.
    static func prepared() throws -> Scratch {
        try ResumeScenario.folder(holding: [("in", reference.input), ("ref.zst", reference.output)])
    }

    @Test("stopped by SIGTERM, SIGINT or SIGKILL, the same command goes on and writes the uninterrupted output",
          arguments: [("TERM", 143), ("INT", 130), ("KILL", 137)])
    func resumes(signal: String, status: Int) throws {
        let scratch = try Self.prepared()
        try Self.scenario.stopsAndResumes(scratch, signal: signal, status: status, expected: scratch.data("ref.zst"),
                                          others: ["in", "ref.zst"])
    }

    /// A tar of 24 MB of text in 48 members, and its uninterrupted output
    /// (which carries a member index), made once.
    static let tarReference: (input: Data?, output: Data?) = {
        let scratch = Scratch()
        for number in 0 ..< 48 { _ = scratch.text("m\(number).txt", size: 500_000, seed: UInt64(number)) }
        let made = try? WeirProcess.shell("""
            tar --sort=name --mtime=@0 --owner=0 --group=0 -cf in.tar m*.txt \
            && $WEIR -q -3 -B1M -T2 --no-resume in.tar -o ref.tar.zst
            """, in: scratch.url, timeout: 300)
        guard made?.status == 0 else { return (nil, nil) }
        return (scratch.data("in.tar"), scratch.data("ref.tar.zst"))
    }()

    @Test("a tar stopped and resumed gets the member index an uninterrupted run writes, byte for byte",
          arguments: [("INT", 130), ("KILL", 137)])
    func resumesTar(signal: String, status: Int) throws {
        let scratch = try ResumeScenario.folder(holding: [("in.tar", Self.tarReference.input),
                                                          ("ref.tar.zst", Self.tarReference.output)])
        // The reference lists its 48 members from its index: what the resumed output must hold too.
        let listed = try WeirProcess.shell("$WEIR -l --members ref.tar.zst", in: scratch.url)
        let lines = listed.stdout.split(separator: UInt8(ascii: "\n")).count
        #expect(listed.status == 0 && lines == 48, "\(listed.stderr)")
        let scenario = ResumeScenario(command: "\(Self.slow) $WEIR -3 -B1M -T2 in.tar -o in.tar.zst", input: "in.tar",
                                      output: "in.tar.zst")
        try scenario.stopsAndResumes(scratch, signal: signal, status: status, expected: scratch.data("ref.tar.zst"),
                                     others: ["in.tar", "ref.tar.zst"])
    }

    /// A way a kept `.part` or its input is changed between two runs, and
    /// the reason the second run must give for starting over.
    struct StartOver: Sendable, CustomTestStringConvertible {
        let prepare: String
        let command: String
        let reason: String
        init(_ prepare: String, _ command: String, _ reason: String) {
            (self.prepare, self.command, self.reason) = (prepare, command, reason)
        }
        var testDescription: String { reason }
    }

    static let startOvers: [StartOver] = [
        StartOver("touch -d '2001-01-01' in", Self.command, "the input changed since it was written"),
        StartOver("", "$WEIR -2 -B1M -T2 in -o in.zst", "it was written with other options"),
        StartOver("truncate -s 1000 in.zst.part", Self.command, "it is shorter than its record says"),
        StartOver("printf 'garbage!' | dd of=in.zst.part conv=notrunc status=none", Self.command,
                  "its frames are not where its record says"),
        // Issue 49: one byte changed inside the first frame; bytes edited
        // with the modification time put back; a hard link to a file the
        // user keeps at the .part's name.
        // (The kept frames are hashed: the .part's frame is not the one written.)
        StartOver("b=$(od -An -tu1 -j5000 -N1 in.zst.part); printf \"\\\\$(printf %o $((255 - b)))\" | "
            + "dd of=in.zst.part bs=1 seek=5000 conv=notrunc status=none", Self.command,
                  "its frame 0 is not what its record says"),
        StartOver("touch -r in stamp && printf 'EDIT' | dd of=in bs=1 seek=100 conv=notrunc status=none "
                    + "&& touch -r stamp in", Self.command, "the input changed since it was written"),
        StartOver("cp ref.zst keep && rm in.zst.part && ln keep in.zst.part", Self.command,
                  "it has other links (it may be another file)"),
        // Issue 59: the cause named, not another: the first frame's
        // checksum altered in the record (no checkpoint matches what it
        // covers); the input itself linked at the .part's name.
        StartOver("sed -i '0,/^frame /s/^frame \\([0-9]* [0-9]*\\) [0-9]*/frame \\1 12345/' .in.zst.part.resume",
                  Self.command, "its record was changed (a checkpoint does not match the lines before it)"),
        StartOver("rm in.zst.part && ln in in.zst.part", Self.command, "it is a hard link to the input"),
    ]

    /// Each case in a folder of its own, side by side: each stops a run and
    /// runs the whole command again (the suite's longest test when the
    /// cases ran one after the other).
    @Test("a changed input, other options or a damaged .part start over, saying why", arguments: startOvers)
    func startsOver(_ change: StartOver) throws {
        let scratch = try Self.prepared()
        try Self.scenario.startsOver(scratch, prepare: change.prepare, command: change.command, reason: change.reason)
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == scratch.data("in"))
        if scratch.exists("keep") {
            #expect(scratch.data("keep") == scratch.data("ref.zst"), "the linked file is untouched")
        }
        let expected = ["in", "in.zst", "ref.zst"] + ["keep", "stamp"].filter { scratch.exists($0) }
        #expect(scratch.names == expected.sorted(), "\(scratch.names)")
    }

    @Test("a .part weir has no record of is left alone; --no-resume keeps nothing; one .part, one weir")
    func boundaries() throws {
        let scratch = try Self.prepared()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: scratch.path("in.zst.part")))
        let foreign = try WeirProcess.shell(Self.command, in: scratch.url, timeout: 300)
        #expect(foreign.status == 0, "\(foreign.stderr)")
        #expect(scratch.data("in.zst") == scratch.data("ref.zst"))
        #expect(scratch.data("in.zst.part") == Data("precious".utf8))
        try FileManager.default.removeItem(atPath: scratch.path("in.zst"))
        try FileManager.default.removeItem(atPath: scratch.path("in.zst.part"))

        // No record is written: stopped once its hidden temporary holds frames.
        let plain = try WeirProcess.shell("""
            \(Self.command) --no-resume & pid=$!
            for i in $(seq 1200); do
                [ "$(stat -c %s .weir-* 2>/dev/null | sort -n | tail -1)" -gt 0 ] 2>/dev/null && break
                sleep 0.05
            done
            kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        #expect(plain.stderr.contains("status 143"), "\(plain.stderr)")
        #expect(scratch.names == ["in", "ref.zst"], "\(scratch.names)")

        let both = try WeirProcess.shell("""
            \(Self.command) & pid=$!
            for i in $(seq 1200); do grep -qs '^options' .in.zst.part.resume && break; sleep 0.05; done
            \(Self.command); echo "second $?" >&2
            kill -TERM $pid; wait $pid
            """, in: scratch.url, timeout: 300)
        #expect(both.stderr.contains("in.zst.part: is being written by another weir"), "\(both.stderr)")
        #expect(both.stderr.contains("second 1"), "\(both.stderr)")
    }

    @Test("--adapt, --rsyncable and --no-seek-table write no .part and no record; stopped, they keep nothing",
          arguments: ["--adapt", "--rsyncable", "--no-seek-table"])
    func notResumable(flag: String) throws {
        let scratch = try Self.prepared()
        // Once frames are written, the folder holds the hidden temporary (a resumable run writes its
        // .part and record from the start); it is stopped then, and keeps nothing.
        let stopped = try WeirProcess.shell("""
            \(Self.command) \(flag) & pid=$!
            for i in $(seq 1200); do
                [ "$(stat -c %s .weir-* in.zst.part 2>/dev/null | sort -n | tail -1)" -gt 0 ] 2>/dev/null && break
                sleep 0.05
            done
            echo "during: $(ls -A | tr '\\n' ' ')" >&2
            kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        let during = try #require(stopped.stderr.split(separator: "\n").first { $0.hasPrefix("during: ") })
        #expect(during.contains(" .weir-") && !during.contains(".part"), "\(during)")
        #expect(stopped.stderr.contains("status 143"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(".part"), "\(stopped.stderr)")
        #expect(scratch.names == ["in", "ref.zst"], "\(scratch.names)")
    }

    @Test("a run that does not resume removes an earlier run's .part and record of its output once written",
          arguments: ["--no-resume", "--adapt", "--rsyncable", "--no-seek-table"])
    func supersededPart(flag: String) throws {
        let scratch = try Self.prepared()
        _ = try Self.scenario.interrupted(scratch, signal: "TERM")
        #expect(scratch.exists("in.zst.part") && scratch.exists(".in.zst.part.resume"), "\(scratch.names)")
        let run = try WeirProcess.shell("$WEIR -q -1 -B1M -T2 \(flag) in -o in.zst", in: scratch.url, timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == Self.reference.input)
        #expect(scratch.names == ["in", "in.zst", "ref.zst"], "\(scratch.names)")
        // A .part with no record is not weir's: left as it is.
        try Data("precious".utf8).write(to: URL(fileURLWithPath: scratch.path("in.zst.part")))
        let again = try WeirProcess.shell("$WEIR -q -f -1 -B1M -T2 \(flag) in -o in.zst", in: scratch.url, timeout: 300)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(scratch.data("in.zst.part") == Data("precious".utf8))
    }

    @Test("a folder at the .part's or the record's name: the output is written, with a warning naming the folder",
          arguments: ["in.zst.part", ".in.zst.part.resume"])
    func folderAtHiddenName(name: String) throws {
        let scratch = try Self.prepared()
        try FileManager.default.createDirectory(atPath: scratch.path(name), withIntermediateDirectories: false)
        let run = try WeirProcess.shell("$WEIR -1 -B1M -T2 in -o in.zst", in: scratch.url, timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("weir: in: warning: \(name) is a folder: this run cannot be resumed if stopped"),
                "\(run.stderr)")
        #expect(try scratch.zstd(["-dc", "in.zst"]).stdout == Self.reference.input)
        #expect(scratch.names == (["in", "in.zst", "ref.zst", name]).sorted(), "\(scratch.names)")
        // -qq hides it, as every warning.
        let quiet = try WeirProcess.shell("$WEIR -qq -f -1 -B1M -T2 in -o in.zst", in: scratch.url, timeout: 300)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }
}
