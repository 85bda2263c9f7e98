import Foundation
import Testing

/// `-b`, zstd's benchmark mode, with zstd's flags; the real zstd run beside
/// it with the same command line.
@Suite("weir -b")
struct BenchmarkCommandTests {
    /// The rows of a run's standard output.
    func rows(_ run: WeirProcess.Result) -> [String] {
        String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The two sizes of a row (`NAME :  SIZE ->  SIZE (x...`).
    func sizes(_ row: String) -> (Int, Int)? {
        guard let colon = row.range(of: " :") else { return nil }
        let numbers = row[colon.upperBound...].split(separator: " ").prefix(3)
        guard numbers.count == 3, let from = Int(numbers[numbers.startIndex]),
              let to = Int(numbers[numbers.index(numbers.startIndex, offsetBy: 2)]) else { return nil }
        return (from, to)
    }

    @Test("-b#e#i0: a weir row and a libzstd row per level; weir's sizes are those of the file weir writes")
    func levels() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        let zstd = try scratch.zstd(["-b1e2i0", "a"])
        #expect(zstd.status == 0, "\(zstd.stderr)")
        let run = try WeirProcess.run(["-b1e2i0", "-T2", "a"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = rows(run)
        #expect(lines.count == 4, "\(lines)")
        for (index, level) in [1, 1, 2, 2].enumerated() where index < lines.count {
            #expect(lines[index].hasPrefix(" \(level)#a "), "\(lines[index])")
            #expect(
                lines[index].contains(index % 2 == 0 ? "weir -T2, 2 frames" : "libzstd -T2, 1 frame"), "\(lines[index])"
            )
            #expect(lines[index].contains(" MB/s, "), "\(lines[index])")
        }
        for (index, level) in [(0, 1), (2, 2)] where index < lines.count {
            let written = try WeirProcess.run(["-\(level)", "-T2", "-c", "a"], in: scratch.url)
            let row = try #require(sizes(lines[index]))
            #expect(row.0 == 3_000_000 && row.1 == written.stdout.count, "\(lines[index])")
        }
        // The libzstd row: one frame of the same level, as zstd -b makes.
        let single = try scratch.zstd(["-1", "-c", "--no-check", "a"])
        let libzstd = try #require(lines.count > 1 ? sizes(lines[1]) : nil)
        #expect(abs(libzstd.1 - single.stdout.count) < 64, "\(lines[1]) against \(single.stdout.count)")
    }

    @Test("-q: zstd's header and one short line per level, as zstd's own -q prints them")
    func quiet() throws {
        let scratch = Scratch()
        scratch.text("a", size: 200_000)
        let zstd = try scratch.zstd(["-q", "-b1e3i0", "a"])
        let weir = try WeirProcess.run(["-q", "-b1e3i0", "a"], in: scratch.url)
        #expect(weir.status == 0 && zstd.status == 0, "\(weir.stderr)")
        let pattern = "^-[0-9] +[0-9]+ \\([0-9]+\\.[0-9]{3}\\) +[0-9.]+ MB/s +[0-9.]+ MB/s  a$"
        for (run, tool) in [(zstd, "zstd"), (weir, "weir")] {
            let lines = rows(run).filter { !$0.hasPrefix("bench ") }
            #expect(lines.count == 3, "\(tool): \(rows(run))")
            #expect(lines.allSatisfy { $0.range(of: pattern, options: .regularExpression) != nil }, "\(tool): \(lines)")
        }
    }

    @Test("-b -d decodes .zst files only, in either order; data that is not zstd fails, as zstd's does")
    func decodeOnly() throws {
        let scratch = Scratch()
        scratch.text("a", size: 500_000)
        #expect(try WeirProcess.run(["-q", "a"], in: scratch.url).status == 0)
        for arguments in [["-b", "-d", "-i0", "a.zst"], ["-d", "-b", "-i0", "a.zst"]] {
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            let lines = rows(run)
            #expect(lines.count == 2 && lines.allSatisfy { $0.contains("decoding") }, "\(arguments): \(lines)")
            let row = try #require(lines.first.flatMap(sizes))
            #expect(row.0 == scratch.data("a.zst")?.count && row.1 == 500_000, "\(lines)")
        }
        #expect(try scratch.zstd(["-b", "-d", "-i0", "a"]).status != 0)
        let invalid = try WeirProcess.run(["-b", "-d", "-i0", "a"], in: scratch.url)
        #expect(invalid.status == 1 && invalid.stderr.contains("not in zstd format"), "\(invalid.stderr)")
    }

    @Test("several files are one sample ('2 files') unless -S; -B cuts frames; no file: zstd's generated sample")
    func samples() throws {
        let scratch = Scratch()
        scratch.text("a", size: 300_000)
        scratch.text("b", size: 300_000, seed: 2)
        let together = rows(try WeirProcess.run(["-bi0", "a", "b"], in: scratch.url))
        #expect(together.count == 2 && together.allSatisfy { $0.hasPrefix(" 3#2 files ") }, "\(together)")
        #expect(together.first.flatMap(sizes)?.0 == 600_000)
        let separate = rows(try WeirProcess.run(["-bi0", "-S", "a", "b"], in: scratch.url))
        #expect(separate.map { $0.prefix(5) } == [" 3#a ", " 3#a ", " 3#b ", " 3#b "], "\(separate)")
        let blocks = rows(try WeirProcess.run(["-bi0", "-B", "100K", "-T2", "a"], in: scratch.url))
        #expect(
            blocks.count == 2 && blocks[0].contains("weir -T2, 3 frames")
                && blocks[1].contains("libzstd -T2, 3 frames"),
            "\(blocks)")
        let generated = try WeirProcess.run(["-bi0", "-e1", "--fast=2"], in: scratch.url)
        #expect(generated.status == 0, "\(generated.stderr)")
        let lines = rows(generated)
        #expect(lines.count == 8 && lines.allSatisfy { $0.contains("#Synthetic 50%") }, "\(lines)")
        #expect(lines.first?.hasPrefix("-2#") == true && lines.last?.hasPrefix(" 1#") == true, "\(lines)")
    }

    @Test("--trace with -b logs every frame of the runs; --priority takes rt only")
    func traceAndPriority() throws {
        let scratch = Scratch()
        scratch.text("a", size: 100_000)
        let run = try WeirProcess.run(["-b1e2i0", "--trace", "t.csv", "a"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        let trace = try String(contentsOfFile: scratch.path("t.csv"), encoding: .utf8)
        #expect(trace.components(separatedBy: ", compress, ").count - 1 >= 4, "\(trace)")
        let refused = try WeirProcess.run(["-bi0", "--priority=high", "a"], in: scratch.url)
        #expect(refused.status == 1 && refused.stderr.contains("--priority=high"), "\(refused.stderr)")
    }
}
