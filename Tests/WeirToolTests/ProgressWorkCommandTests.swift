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
        try "export WEIR_TEST_STEP_DELAY=\(delay)\n\(command)\necho \"status $?\"\n"
            .write(toFile: scratch.path("job.sh"), atomically: true, encoding: .utf8)
        let run = try WeirProcess.shell("script -qec 'bash job.sh' /dev/null", in: scratch.url, timeout: 300)
        let screen = String(decoding: run.stdout, as: UTF8.self)
        #expect(screen.contains("status 0"), "\(screen.debugDescription)")
        // A redraw: "\r", the line, erase to its end. "NAME  NN% [" or "(n/N) NAME  NN%".
        let pattern = try Regex(#"\r(?:\(\d+/\d+\) )?(\S+) +(\d+)% "#)
        return screen.split(separator: "\u{1B}[K").compactMap { piece in
            guard let match = try? pattern.prefixMatch(in: piece), let name = match.output[1].substring,
                  let percent = match.output[2].substring.flatMap({ Int($0) }) else { return nil }
            return Draw(name: String(name), percent: percent, text: String(piece))
        }
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
        // Read at 30% and 60% of the run (the redraws come ten a second), the
        // line shows within 35 points of those shares of it.
        for share in [30, 60] where !mine.isEmpty {
            let seen = mine[mine.count * share / 100].percent
            #expect(abs(seen - share) <= 35, "\(name) at \(share)% of the run: \(percents)", sourceLocation: sourceLocation)
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
}
