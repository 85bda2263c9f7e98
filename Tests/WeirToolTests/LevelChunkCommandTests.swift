import Foundation
import Testing

/// The default frame size follows the level (issue 41): what `weir -lv`
/// lists for the same 20 MiB at -3 and at -12, and `-B` over both.
@Suite("weir frames sized by level")
struct LevelChunkCommandTests {
    /// The frame count `weir -lv` lists for `name`.
    static func frames(_ name: String, in scratch: Scratch) throws -> Int? {
        let listing = try WeirProcess.run(["-lv", name], in: scratch.url)
        let text = String(decoding: listing.stdout, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("# Zstandard Frames: ") }
        return line.flatMap { Int($0.dropFirst("# Zstandard Frames: ".count)) }
    }

    @Test("one worker: -3 cuts 20 MiB into 8 MiB frames, -12 into one 32 MiB chunk; -B8M gives -12 -3's frames")
    func framesByLevel() throws {
        let scratch = Scratch()
        // 64 KiB of random bytes repeated: quick at any level.
        var generator = SystemRandomNumberGenerator()
        let block = Data((0..<(64 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        var data = Data()
        for _ in 0..<320 { data.append(block) }
        try data.write(to: URL(fileURLWithPath: scratch.path("in")))
        for (flags, name, count) in [(["-3"], "3.zst", 3), (["-12"], "12.zst", 1), (["-12", "-B8M"], "12b.zst", 3)] {
            let run = try WeirProcess.run(["-q", "-T1"] + flags + ["in", "-o", name], in: scratch.url)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Self.frames(name, in: scratch) == count, "\(flags)")
            #expect(try WeirProcess.run(["-q", "-dc", name], in: scratch.url).stdout == data)
        }
        // Two workers: a file under a chunk per worker is still cut in two.
        let two = try WeirProcess.run(["-q", "-T2", "-12", "in", "-o", "12t.zst"], in: scratch.url)
        #expect(two.status == 0, "\(two.stderr)")
        #expect(try Self.frames("12t.zst", in: scratch) == 2)
    }

    @Test("two workers: from -17 a file under zstd -T's job (4 windows) stays one frame, as zstd -T2 keeps it")
    func highLevelsKeepSmallFilesWhole() throws {
        let scratch = Scratch()
        scratch.text("in", size: 3_000_000)
        for (level, count) in [("-16", 2), ("-17", 1)] {
            let name = "l\(level.dropFirst()).zst"
            let run = try WeirProcess.run(["-q", "-T2", level, "in", "-o", name], in: scratch.url)
            #expect(run.status == 0, "\(level): \(run.stderr)")
            #expect(try Self.frames(name, in: scratch) == count, "\(level)")
            #expect(try scratch.zstd(["-dc", name]).stdout == scratch.data("in"))
        }
    }
}
