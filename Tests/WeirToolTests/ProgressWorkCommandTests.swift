import Foundation
import Testing

/// The progress line follows the work (the input compressed), not the
/// reading: read in a real pseudo-terminal while `WEIR_TEST_STEP_HOLD` holds
/// the workers after their first step of input, then over the whole run.
/// At -19 a whole chunk is read at once, and the line counting reads showed
/// 100% from the first second to the end. Nothing here counts redraws or
/// steps: how a run is sliced depends on the step size and on how the cores
/// are shared, not on anything a user sees.
@Suite("weir progress follows the work")
struct ProgressWorkCommandTests {
    /// One redraw of the line: the name as drawn, and its percentage.
    struct Draw: Equatable {
        let name: String
        let percent: Int
        let text: String
    }

    /// Runs `command` (bash, `$WEIR` the binary) in a pseudo-terminal, its
    /// workers held after their first step of work (`WEIR_TEST_STEP_HOLD`)
    /// until the line shows one of `names` (the first input weir takes)
    /// between 0% and 100% with a speed and an ETA; then lets it finish.
    /// Returns every redraw: the moments are the test's, not the machine's.
    func draws(_ command: String, _ scratch: Scratch, names: Set<String>) throws -> [Draw] {
        let hold = scratch.path("hold")
        scratch.touch("hold")
        defer { unlink(hold) }
        let session = try TerminalSession("export WEIR_TEST_STEP_HOLD='\(hold)'\n\(command)\necho \"status $?\"\n",
                                          in: scratch)
        // The event waited for: the line drawn at the held moment.
        let timed = try Regex(#"/s +\d+:\d\d ETA \d+:\d\d"#)
        let shows = { (draw: Draw) in
            names.contains(draw.name) && draw.percent > 0 && draw.percent < 100 && draw.text.contains(timed)
        }
        #expect(session.wait { Self.parse($0).contains(where: shows) },
                "\(names) held after a step: \(Self.parse(session.screen).map(\.text).suffix(5))")
        unlink(hold)
        let screen = session.finish()
        #expect(screen.contains("status 0"), "\(screen.debugDescription)")
        return Self.parse(screen)
    }

    /// The redraws on a screen: "\r", the line, erase to its end.
    static func parse(_ screen: String) -> [Draw] {
        // "NAME  NN% [" or "(n/N) NAME  NN%".
        guard let pattern = try? Regex(#"\r(?:\(\d+/\d+\) )?(\S+) +(\d+)% "#) else { return [] }
        return screen.split(separator: "\u{1B}[K").compactMap { piece in
            guard let match = try? pattern.prefixMatch(in: piece), let name = match.output[1].substring,
                  let percent = match.output[2].substring.flatMap({ Int($0) }) else { return nil }
            return Draw(name: String(name), percent: percent, text: String(piece))
        }
    }

    /// What a user watching `name`'s line must see: held after a step of
    /// work, with all its input read, it shows a share of the work between
    /// 0% and 100% with a speed and an ETA (``draws(_:_:names:)`` waits for
    /// that); over the run it never goes back, never passes 100%, and ends
    /// at 100%.
    func expectFollowsWork(_ draws: [Draw], name: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let mine = draws.filter { $0.name == name }
        let percents = mine.map(\.percent)
        #expect(zip(percents, percents.dropFirst()).allSatisfy { $0 <= $1 }, "\(name): \(percents)",
                sourceLocation: sourceLocation)
        #expect(percents.allSatisfy { $0 <= 100 }, "\(name): \(percents)", sourceLocation: sourceLocation)
        #expect(percents.last == 100, "\(name): \(percents)", sourceLocation: sourceLocation)
    }

    @Test("-19 and -3 on a file read at once: the line follows the compression", .timeLimit(.minutes(5)))
    func level19() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR -19 -f in -o out.zst", scratch, names: ["in"]), name: "in")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        let larger = scratch.text("in", size: 8_000_000)
        expectFollowsWork(try draws("$WEIR -3 -T2 -f in -o out.zst", scratch, names: ["in"]), name: "in")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == larger)
    }

    @Test("through a pipe with --size-hint, and --long=27 whose window holds the chunk", .timeLimit(.minutes(5)))
    func pipeAndLong() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 8_000_000)
        expectFollowsWork(try draws("cat in | $WEIR --size-hint 8000000 -c > out.zst", scratch, names: ["(stdin)"]),
                          name: "(stdin)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
        expectFollowsWork(try draws("$WEIR --long=27 -f in -o long.zst", scratch, names: ["in"]), name: "in")
        #expect(try scratch.zstd(["-dc", "--long=27", "long.zst"]).stdout == original)
    }

    @Test("--format=xz -9 and -r over a tree, file by file", .timeLimit(.minutes(5)))
    func xzAndTree() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR --format=xz -9 -f in -o out.xz", scratch, names: ["in"]), name: "in")
        #expect(try WeirProcess.run(["-dc", "out.xz"], in: scratch.url).stdout == original)
        try FileManager.default.createDirectory(atPath: scratch.path("tree/sub"), withIntermediateDirectories: true)
        scratch.text("tree/a", size: 4_000_000, seed: 2)
        scratch.text("tree/sub/b", size: 4_000_000, seed: 3)
        // The first file weir takes is held; the second runs free once the hold is gone.
        let run = try draws("$WEIR -r tree", scratch, names: ["tree/a", "tree/sub/b"])
        expectFollowsWork(run, name: "tree/a")
        expectFollowsWork(run, name: "tree/sub/b")
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
        expectFollowsWork(try draws("$WEIR -d -f in.zst -o back", scratch, names: ["in.zst"]), name: "in.zst")
        #expect(scratch.data("back") == original)
        // One frame of unknown size through a pipe, streamed as it arrives (--size-hint: the compressed size).
        let size = try #require(scratch.data("in.zst")?.count)
        let piped = "cat in.zst | $WEIR -d --size-hint \(size) -c > piped"
        expectFollowsWork(try draws(piped, scratch, names: ["(stdin)"]), name: "(stdin)")
        #expect(scratch.data("piped") == original)
    }

    @Test("--ultra -22: the line follows the compression", .timeLimit(.minutes(5)))
    func ultra() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 2_000_000)
        expectFollowsWork(try draws("$WEIR --ultra -22 -f in -o out.zst", scratch, names: ["in"]), name: "in")
        #expect(try scratch.zstd(["-dc", "--long=27", "out.zst"]).stdout == original)
    }

    @Test("a slow pipe: before a chunk is compressed, the line shows the bytes read and their rate, not 0 B/s",
          .timeLimit(.minutes(5)))
    func slowPipe() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 4_500_000)
        // 4.5 MB in three pieces, each sent when the test has seen the one
        // before on the line (reads are told a mebibyte at a time): less
        // than one chunk of -3 (8 MiB), so nothing is compressed until the end.
        let producer = """
            head -c 1500000 in; until [ -e go1 ]; do sleep 0.01; done
            tail -c +1500001 in | head -c 1500000; until [ -e go2 ]; do sleep 0.01; done
            tail -c +3000001 in
            """
        let session = try TerminalSession("{ \(producer)\n} | $WEIR -c > out.zst\necho \"status $?\"\n", in: scratch)
        // Read bytes grow and come with their rate while nothing is compressed.
        let reading = try Regex(#"\r\(stdin\) .* read +(\d+(?:\.\d+)?) ([KM]iB) +(\d+(?:\.\d+)?) ([KM]?i?B)/s"#)
        let shown = { (screen: String, atLeast: Double) -> Bool in
            screen.split(separator: "\u{1B}[K").contains { line in
                guard let match = try? reading.firstMatch(in: line),
                      let amount = match.output[1].substring.flatMap({ Double($0) }),
                      let unit = match.output[2].substring, let rate = match.output[3].substring.flatMap({ Double($0) })
                else { return false }
                return amount * (unit == "MiB" ? 1_048_576 : 1024) >= atLeast && rate > 0
            }
        }
        #expect(session.wait { shown($0, 1_000_000) }, "\(session.screen.debugDescription)")
        scratch.touch("go1")
        #expect(session.wait { shown($0, 2_000_000) }, "\(session.screen.debugDescription)")
        scratch.touch("go2")
        let screen = session.finish()
        #expect(screen.contains("status 0"), "\(screen.debugDescription)")
        #expect(try scratch.zstd(["-dc", "out.zst"]).stdout == original)
    }
}
