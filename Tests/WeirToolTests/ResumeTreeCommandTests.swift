import Foundation
import Testing

/// `weir -r` stopped half-way, then run again: the files done are skipped
/// (their outputs exist and check), the one stopped is resumed, and the
/// outputs of the first run are not compressed again.
@Suite("weir -r resume")
struct ResumeTreeCommandTests {
    /// Slow enough (1 MiB frames, the test builds' hooks: a pause after
    /// each chunk read, a checkpoint every 0.1 s) for `big` to be stopped
    /// after its first checkpoint; the small files go first (`one` is
    /// given first). The pause is longer than ResumeCommandTests.slow's:
    /// the polling shell must get the CPU while `big` runs, and under load
    /// (three test processes on two cores, load 22) 16 pauses of 0.08 s
    /// were too short a window; waiting costs no CPU.
    static let command =
        "WEIR_TEST_FRAME_DELAY=0.2 WEIR_TEST_CHECKPOINT_INTERVAL=0.1 $WEIR -r -3 -B1M -T2 t/one t/two"

    /// `t/one/{a,b}`, `t/one/sub/c` (small) and `t/two/big` (16 MB), and `t/two/d`.
    static func tree() throws -> Scratch {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("t/one/sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.path("t/two"), withIntermediateDirectories: true)
        for (index, name) in ["t/one/a", "t/one/b", "t/one/sub/c", "t/two/d"].enumerated() {
            _ = scratch.text(name, size: 200_000 + index * 1000, seed: UInt64(index + 1))
        }
        _ = scratch.text("t/two/big", size: 16_000_000, seed: 9)
        return scratch
    }

    /// Every file under `t`, sorted, with its inode and change time (`%i %z`).
    static func listing(_ scratch: Scratch) throws -> String {
        String(decoding: try WeirProcess.shell("find t -type f -exec stat -c '%n %i %z' {} + | sort",
                                               in: scratch.url).stdout, as: UTF8.self)
    }

    @Test("stopped by SIGTERM in the big file, the same -r skips the files done and resumes the big one")
    func skipsAndResumes() throws {
        // Stopped once the big file has a checkpoint and the small ones are written: under load their group's
        // commit came after the big file's first checkpoint, and the stop found a.zst not yet made.
        let scratch = try Self.tree()
        let stopped = try WeirProcess.shell(
            """
            \(Self.command) & pid=$!
            for i in $(seq 1200); do
                grep -qs '^checkpoint' t/two/.big.zst.part.resume && [ -e t/one/a.zst ] && [ -e t/one/b.zst ] \
                    && [ -e t/one/sub/c.zst ] && break
                sleep 0.05
            done
            kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        #expect(stopped.stderr.contains("status 143"), "\(stopped.stderr)")
        #expect(
            stopped.stderr.contains("weir: t/two/big: cancelled; t/two/big.zst.part keeps the first "),
            "\(stopped.stderr)")
        let done = ["t/one/a", "t/one/b", "t/one/sub/c"]
        for name in done { #expect(scratch.exists(name + ".zst"), "\(name)") }
        #expect(scratch.exists("t/two/big.zst.part"))
        let before = try Self.listing(scratch)

        let resumed = try WeirProcess.shell(Self.command, in: scratch.url, timeout: 300)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        for name in done {
            #expect(
                resumed.stderr.contains("weir: \(name): already compressed to \(name).zst, skipped\n"),
                "\(resumed.stderr)")
        }
        #expect(resumed.stderr.contains("t/two/big: "), "\(resumed.stderr)")
        #expect(resumed.stderr.contains(", resumed at "), "\(resumed.stderr)")
        // Not rewritten: the same inode and change time.
        let after = try Self.listing(scratch)
        let kept = { (listing: String) in
            listing.split(separator: "\n").filter { line in done.contains { line.hasPrefix($0 + ".zst ") } }
        }
        #expect(kept(after) == kept(before), "\(before)\n\(after)")
        // Every output decodes to its input; nothing else is left.
        let inputs = done + ["t/two/big", "t/two/d"]
        for name in inputs {
            #expect(try scratch.zstd(["-dc", name + ".zst"]).stdout == scratch.data(name), "\(name)")
        }
        let files = try WeirProcess.shell("find t -type f | sort", in: scratch.url).stdout
        #expect(
            String(decoding: files, as: UTF8.self).split(separator: "\n").map(String.init)
                == (inputs + inputs.map { $0 + ".zst" }).sorted())

        // Once more: nothing to do, nothing written, no NAME.zst.zst.
        let again = try WeirProcess.shell(Self.command, in: scratch.url, timeout: 300)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stderr.contains("weir: t/two/big: already compressed to t/two/big.zst, skipped"), "\(again.stderr)")
        #expect(try Self.listing(scratch) == after)
    }

    @Test("an output that is not the input's finished compression is refused as before; -f and --no-resume as zstd")
    func refusesOthers() throws {
        let scratch = try Self.tree()
        try FileManager.default.removeItem(atPath: scratch.path("t/two/big"))
        let first = try WeirProcess.shell("$WEIR -q -r t", in: scratch.url)
        #expect(first.status == 0, "\(first.stderr)")
        // a.zst: cut short, same stamp; b.zst: another file, same stamp.
        let run = try WeirProcess.shell(
            """
            truncate -s -5 t/one/a.zst && touch -r t/one/a t/one/a.zst
            printf 'not it' > t/one/b.zst && touch -r t/one/b t/one/b.zst
            $WEIR -r t </dev/null; echo "status $?" >&2
            """, in: scratch.url)
        #expect(run.stderr.contains("status 1"), "\(run.stderr)")
        #expect(run.stderr.contains("t/one/a.zst: already exists"), "\(run.stderr)")
        #expect(run.stderr.contains("t/one/b.zst: already exists"), "\(run.stderr)")
        #expect(
            run.stderr.contains("weir: t/one/sub/c: already compressed to t/one/sub/c.zst, skipped"), "\(run.stderr)")
        #expect(!scratch.exists("t/one/sub/c.zst.zst"))
        // A NAME.zst that only shares NAME's time is an input, as zstd takes it.
        #expect(scratch.exists("t/one/b.zst.zst"))
        // -q: skipped silently; --rm keeps a skipped input.
        let quiet = try WeirProcess.shell("$WEIR -q --rm -r t/one/sub", in: scratch.url)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(scratch.exists("t/one/sub/c"))
        // Named without -r, a finished output is refused as zstd refuses it
        // (zstd's playTests.sh: `zstd -q tmp && die "overwrite check failed!"`).
        let named = try WeirProcess.shell("$WEIR -q t/one/sub/c </dev/null", in: scratch.url)
        #expect(named.status == 1, "\(named.stderr)")
        // As zstd: -f compresses again (and the outputs too); --no-resume refuses.
        let plain = try WeirProcess.shell("$WEIR --no-resume -r t/one/sub </dev/null", in: scratch.url)
        #expect(plain.status == 1 && plain.stderr.contains("t/one/sub/c.zst: already exists"), "\(plain.stderr)")
        let forced = try WeirProcess.shell("$WEIR -q -f -r t/one/sub", in: scratch.url)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(scratch.exists("t/one/sub/c.zst.zst"))
    }

    @Test("--json: an input skipped as already compressed is one object with status skipped, and the run exits 0")
    func skippedInJSON() throws {
        let scratch = try Self.tree()
        try FileManager.default.removeItem(atPath: scratch.path("t/two/big"))
        let first = try WeirProcess.shell("$WEIR -q -r t", in: scratch.url)
        #expect(first.status == 0, "\(first.stderr)")
        let again = try WeirProcess.run(["--json", "-r", "t/one"], in: scratch.url)
        #expect(again.status == 0, "\(again.stderr)")
        let objects = try again.stderr.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        let inputs = objects.filter { $0["total"] as? Bool != true }
        #expect(
            inputs.compactMap { $0["input"] as? String }.sorted() == ["t/one/a", "t/one/b", "t/one/sub/c"],
            "\(again.stderr)")
        for object in inputs { #expect(object["status"] as? String == "skipped", "\(object)") }
        #expect(!scratch.exists("t/one/a.zst.zst"))
    }
}