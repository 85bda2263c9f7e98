import Foundation
import Testing

/// The progress line follows the work (the input compressed), not the
/// reading: read in a real pseudo-terminal at every redraw of a run that
/// `WEIR_TEST_STEP_DELAY` slows after each step of input a worker compressed.
/// At -19 a whole chunk is read at once, and the line counting reads showed
/// 100% from the first second to the end.
@Suite("weir progress follows the work")
struct ProgressWorkCommandTests {
    /// One redraw of the line: the name as drawn, and its percentage.
    struct Draw: Equatable {
        let name: String
        let percent: Int
        let text: String
    }

    /// Runs `command` (bash, `$WEIR` the binary) in a pseudo-terminal with
    /// every compression step slowed; returns the redraws of the line.
    func draws(_ command: String, _ scratch: Scratch, delay: Double = 0.05) throws -> [Draw] {
        let screen = try self.screen("export WEIR_TEST_STEP_DELAY=\(delay)\n\(command)", scratch)
        // A redraw: "\r", the line, erase to its end. "NAME  NN% [" or "(n/N) NAME  NN%".
        let pattern = try Regex(#"\r(?:\(\d+/\d+\) )?(\S+) +(\d+)% "#)
        return screen.split(separator: "\u{1B}[K").compactMap { piece in
            guard let match = try? pattern.prefixMatch(in: piece), let name = match.output[1].substring,
                  let percent = match.output[2].substring.flatMap({ Int($0) }) else { return nil }
            return Draw(name: String(name), percent: percent, text: String(piece))
        }
    }

    /// Runs `script` (bash) in a pseudo-terminal; returns all the terminal
    /// received, having checked that the script's last command succeeded.
    func screen(_ script: String, _ scratch: Scratch) throws -> String {
        try "\(script)\necho \"status $?\"\n".write(toFile: scratch.path("job.sh"), atomically: true, encoding: .utf8)
        let run = try WeirProcess.shell("script -qec 'bash job.sh' /dev/null", in: scratch.url, timeout: 300)
        let screen = String(decoding: run.stdout, as: UTF8.self)
        #expect(screen.contains("status 0"), "\(screen.debugDescription)")
        return screen
    }

    /// What a user watching `name`'s line must see: it moves in steps (not
    /// all at once), never goes back, never passes 100%, ends at 100%, and
    /// shows a speed and an ETA on the way.
    func expectFollowsWork(_ draws: [Draw], name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let mine = draws.filter { $0.name == name }
        let percents = mine.map(\.percent)
        #expect(zip(percents, percents.dropFirst()).allSatisfy { $0 <= $1 }, "\(name): \(percents)",
                sourceLocation: sourceLocation)
        #expect(percents.allSatisfy { $0 <= 100 }, "\(name): \(percents)", sourceLocation: sourceLocation)
        #expect(percents.last == 100, "\(name): \(percents)", sourceLocation: sourceLocation)
        let between = Set(percents.filter { $0 > 0 && $0 < 100 })
        #expect(between.count >= 4, "\(name): \(percents)", sourceLocation: sourceLocation)
        // Read at 30% of the run (the redraws come ten a second), the line is
        // not yet at 100% (the line that counted reads was, after the first
        // second of a run of several); at 60%, it has left 0%. How far on it
        // is depends on how the machine shares its cores while the test runs,
        // which the test does not control: it asserts no timing.
        if !mine.isEmpty {
            let (early, later) = (mine[mine.count * 30 / 100].percent, mine[mine.count * 60 / 100].percent)
            #expect(early < 100 && later > 0, "\(name) at 30% and 60% of the run: \(percents)",
                    sourceLocation: sourceLocation)
        }
        let midway = mine.filter { $0.percent >= 10 && $0.percent <= 90 }
        let timed = try? Regex(#"/s +\d+:\d\d ETA \d+:\d\d"#)
        #expect(midway.contains { draw in timed.map { draw.text.contains($0) } ?? false },
                "\(name): \(mine.map(\.text).suffix(5))", sourceLocation: sourceLocation)
    }

    @Test("-19 and -3 on a file read at once: the line follows the compression", .timeLimit(.minutes(5)))
    func level19() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR -19 -f in -o out.zst", scratch, delay: 0.1), name: "in")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        let larger = scratch.text("in", size: 8_000_000)
        expectFollowsWork(try draws("$WEIR -3 -T2 -f in -o out.zst", scratch), name: "in")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == larger)
    }

    @Test("through a pipe with --size-hint, and --long=27 whose window holds the chunk", .timeLimit(.minutes(5)))
    func pipeAndLong() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 8_000_000)
        expectFollowsWork(try draws("cat in | $WEIR --size-hint 8000000 -c > out.zst", scratch), name: "(stdin)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        expectFollowsWork(try draws("$WEIR --long=27 -f in -o long.zst", scratch), name: "in")
        #expect(try scratch.zstd(["-dc", "--long=27", "long.zst"]).stdout == original)
    }

    @Test("--format=xz -9 and -r over a tree, file by file", .timeLimit(.minutes(5)))
    func xzAndTree() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR --format=xz -9 -f in -o out.xz", scratch, delay: 0.1), name: "in")
        #expect(try WeirProcess.run(["-dc", "out.xz"], in: scratch.url).stdout == original)
        try FileManager.default.createDirectory(atPath: scratch.path("tree/sub"), withIntermediateDirectories: true)
        scratch.text("tree/a", size: 4_000_000, seed: 2)
        scratch.text("tree/sub/b", size: 4_000_000, seed: 3)
        let draws = try draws("$WEIR -r tree", scratch, delay: 0.1)
        expectFollowsWork(draws, name: "tree/a")
        expectFollowsWork(draws, name: "tree/sub/b")
        #expect(scratch.exists("tree/a.zst") && scratch.exists("tree/sub/b.zst"))
    }

    @Test("-d of a -19 file: the line follows the decoding, not the reading of the frame", .timeLimit(.minutes(5)))
    func decompression() throws {
        let scratch = Scratch()
        // Random bytes: the frame is as large as its content, ten steps of a decoder.
        let made = try WeirProcess.shell("head -c 2600000 /dev/urandom > in && $WEIR -19 -q in", in: scratch.url,
                                         timeout: 300)
        #expect(made.status == 0, "\(made.stderr)")
        let original = try #require(scratch.data("in"))
        expectFollowsWork(try draws("$WEIR -d -f in.zst -o back", scratch, delay: 0.1), name: "in.zst")
        #expect(scratch.data("back") == original)
        // One frame of unknown size through a pipe, streamed as it arrives (--size-hint: the compressed size).
        let size = try #require(scratch.data("in.zst")?.count)
        expectFollowsWork(try draws("cat in.zst | $WEIR -d --size-hint \(size) -c > piped", scratch, delay: 0.1),
                          name: "(stdin)")
        #expect(scratch.data("piped") == original)
    }

    @Test("--ultra -22: the line follows the compression", .timeLimit(.minutes(5)))
    func ultra() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR --ultra -22 -f in -o out.zst", scratch, delay: 0.1), name: "in")
        #expect(try scratch.zstd(["-dc", "--long=27", "out.zst"]).stdout == original)
    }

    @Test("a slow pipe: before a chunk is compressed, the line shows the bytes read and their rate, not 0 B/s",
          .timeLimit(.minutes(5)))
    func slowPipe() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        // 3 MB in 300 KB pieces, 0.2 s apart: less than one chunk of -3 (8 MiB), so nothing is compressed until the end.
        let producer = "for i in $(seq 0 9); do tail -c +$((i * 300000 + 1)) in | head -c 300000; sleep 0.2; done"
        let screen = try self.screen("\(producer) | $WEIR -c > out.zst", scratch)
        let lines = screen.split(separator: "\u{1B}[K").filter { $0.hasPrefix("\r(stdin) ") }
        let reading = lines.filter { $0.contains(" read ") }
        #expect(reading.count >= 3, "\(lines)")
        // Read bytes grow and come with their rate while nothing is compressed.
        let timed = try Regex(#"read +\d+(\.\d+)? [KM]iB +\d+(\.\d+)? [KM]iB/s"#)
        #expect(reading.contains { $0.contains(timed) }, "\(reading)")
        #expect(!reading.contains { $0.contains(" 0 B/s") }, "\(reading)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
    }
}
