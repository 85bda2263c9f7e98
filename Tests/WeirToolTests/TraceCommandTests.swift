import Foundation
import Testing

/// `--trace FILE`: zstd's CSV, one line per frame, written by libzstd's own
/// trace hooks; compared with the real zstd's file.
@Suite("weir --trace")
struct TraceCommandTests {
    /// The lines of a trace file.
    func lines(_ scratch: Scratch, _ name: String) throws -> [String] {
        try String(contentsOfFile: scratch.path(name), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Column `index` (0-based) of a trace line.
    func column(_ line: String, _ index: Int) -> String {
        line.components(separatedBy: ", ")[index]
    }

    @Test("one line per frame in zstd's columns, after zstd's header; later runs append without a second header")
    func framesLogged() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        let zstd = try scratch.zstd(["-q", "-f", "--trace", "z.csv", "a", "-o", "z.zst"])
        #expect(zstd.status == 0, "\(zstd.stderr)")
        let compress = try WeirProcess.run(["-q", "-f", "-T2", "-B", "1M", "--trace", "w.csv", "a"], in: scratch.url)
        #expect(compress.status == 0, "\(compress.stderr)")
        let compressed = try lines(scratch, "w.csv")
        #expect(compressed.first == (try lines(scratch, "z.csv")).first)
        let frames = compressed.dropFirst()
        #expect(frames.count == 3, "\(compressed)")  // 3 MB in frames of 1 MiB
        for line in frames {
            #expect(line.components(separatedBy: ", ").count == 12, "\(line)")
            #expect(column(line, 0) == "zstd" && column(line, 2) == "compress" && column(line, 4) == "3", "\(line)")
        }
        #expect(frames.compactMap { Int(column($0, 7)) }.reduce(0, +) == 3_000_000)
        let sizes = frames.compactMap { Int(column($0, 8)) }.reduce(0, +)
        let output = try #require(scratch.data("a.zst"))
        #expect(sizes > 0 && sizes <= output.count)

        let test = try WeirProcess.run(["-q", "--trace", "w.csv", "-t", "a.zst"], in: scratch.url)
        #expect(test.status == 0, "\(test.stderr)")
        let all = try lines(scratch, "w.csv")
        #expect(all.count == 7 && all.filter { $0.hasPrefix("Algorithm") }.count == 1, "\(all)")
        let decoded = all.suffix(3)
        #expect(decoded.allSatisfy { column($0, 2) == "decompress" }, "\(decoded)")
        #expect(decoded.compactMap { Int(column($0, 7)) }.reduce(0, +) == 3_000_000)
    }

    @Test("a trace file that cannot be opened stops the command before any input is touched")
    func unopenable() throws {
        let scratch = Scratch()
        scratch.text("a", size: 10_000)
        let run = try WeirProcess.run(["--trace", "missing/t.csv", "a"], in: scratch.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("missing/t.csv") && run.stderr.contains("No such file"), "\(run.stderr)")
        #expect(!scratch.exists("a.zst"))
    }
}
