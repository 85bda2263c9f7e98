import Foundation
import Testing

/// A file-to-file decompression that is stopped keeps the content of its
/// whole frames as `NAME.part` (with `.NAME.part.resume`), and the same
/// command finishes it.
@Suite("weir -d resume")
struct ResumeDecompressionCommandTests {
    /// The command every test runs. Decoding 16 MB takes tens of
    /// milliseconds: the test hooks make the reading thread wait 0.04 s per
    /// frame (over a second for the 31 frames) and checkpoint every 0.1 s
    /// rather than every 2 s, so that a run is stopped after a checkpoint.
    static let command = "\(ResumeCommandTests.slow) $WEIR -d -T2 in.zst -o out"
    static let scenario = ResumeScenario(command: command, input: "in.zst", output: "out")

    /// The input (16 MB of text) and weir's file of it in 512 KiB frames,
    /// made once for every test.
    static let reference: (input: Data, compressed: Data?) = {
        let scratch = Scratch()
        let input = scratch.text("in", size: 16_000_000, seed: 9)
        let run = try? WeirProcess.shell("$WEIR -q -B512K -T2 in -o in.zst", in: scratch.url, timeout: 300)
        return (input, run?.status == 0 ? scratch.data("in.zst") : nil)
    }()

    /// A folder with `in` and `in.zst`.
    static func prepared() throws -> Scratch {
        try ResumeScenario.folder(holding: [("in", reference.input), ("in.zst", reference.compressed)])
    }

    @Test("stopped by SIGTERM, SIGINT or SIGKILL, the same command goes on and writes the whole content",
          arguments: [("TERM", 143), ("INT", 130), ("KILL", 137)])
    func resumes(signal: String, status: Int) throws {
        let scratch = try Self.prepared()
        try Self.scenario.stopsAndResumes(scratch, signal: signal, status: status, expected: scratch.data("in"),
                                          others: ["in", "in.zst"])
    }

    @Test("a changed input, a short .part, a damaged frame or a link at the .part start over, saying why")
    func startsOver() throws {
        let scratch = try Self.prepared()
        let cases: [(prepare: String, reason: String)] = [
            ("touch -d '2001-01-01' in.zst", "the input changed since it was written"),
            ("truncate -s 1000 out.part", "it is shorter than its record says"),
            ("printf 'garbage!' | dd of=out.part bs=1 seek=100 conv=notrunc status=none",
             "its frame 0's content is not the input's"),
            // Issue 49: a hard link to a file the user keeps, put at the name.
            ("cp in keep && rm out.part && ln keep out.part", "it has other links (it may be another file)"),
            // Issue 59: the input itself linked at the .part's name is named so.
            ("rm out.part && ln in.zst out.part", "it is a hard link to the input"),
        ]
        for (prepare, reason) in cases {
            try Self.scenario.startsOver(scratch, prepare: prepare, reason: reason)
            #expect(scratch.data("out") == scratch.data("in"), "\(reason)")
            if scratch.exists("keep") {
                #expect(scratch.data("keep") == scratch.data("in"), "the linked file is untouched")
                try FileManager.default.removeItem(atPath: scratch.path("keep"))
            }
            #expect(scratch.names == ["in", "in.zst", "out"], "\(scratch.names)")
            try FileManager.default.removeItem(atPath: scratch.path("out"))
        }
    }

    @Test("--no-resume, or a single frame, keeps nothing")
    func keepsNothing() throws {
        let scratch = try Self.prepared()
        // No record is written: stopped once its hidden temporary holds content.
        let plain = try WeirProcess.shell("""
            \(Self.command) --no-resume & pid=$!
            for i in $(seq 1200); do
                [ "$(stat -c %s .weir-* 2>/dev/null | sort -n | tail -1)" -gt 0 ] 2>/dev/null && break
                sleep 0.05
            done
            kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        #expect(plain.stderr.contains("status 143"), "\(plain.stderr)")
        #expect(scratch.names == ["in", "in.zst"], "\(scratch.names)")

        // Stock zstd's one frame cannot be cut: stopped while it waits
        // before decoding it, the run leaves nothing.
        _ = try scratch.zstd(["-q", "-T2", "in", "-o", "one.zst"])
        let single = try WeirProcess.shell("""
            WEIR_TEST_FRAME_DELAY=5 $WEIR -d one.zst -o out & pid=$!
            sleep 1; kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        #expect(single.stderr.contains("status 143"), "\(single.stderr)")
        #expect(scratch.names == ["in", "in.zst", "one.zst"], "\(scratch.names)")
    }
}
