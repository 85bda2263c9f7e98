import Foundation
import Testing

/// Sizes that weir's own multi-member files state in headers are hints, never
/// the truth (issue 49, item 5): a file that gzip or lz4 reads is read by
/// weir, on every number of threads, to the same bytes; one they refuse,
/// weir refuses.
@Suite("size fields weir wrote are hints: gzip's Wr, lz4's content size")
struct HintedSizeCommandTests {
    /// The ways weir reads `file`; each line prints what it decoded.
    static func readers(_ file: String) -> [String] {
        ["$WEIR -dc -T2 \(file)", "$WEIR -dc -T1 \(file)", "cat \(file) | $WEIR -dc -T2",
         "$WEIR -q -t -T2 \(file) && cat in"]
    }

    /// Runs `tool` and weir's readers on `file`: each reads it whole to `in`'s
    /// bytes with exit 0, as the tool does.
    static func expectReadAsTool(_ tool: String, _ file: String, _ scratch: Scratch) throws {
        let reference = try WeirProcess.shell("\(tool) \(file)", in: scratch.url)
        #expect(reference.status == 0 && reference.stdout == scratch.data("in"), "\(tool): \(reference.stderr)")
        for line in readers(file) {
            let run = try WeirProcess.shell(line, in: scratch.url)
            #expect(run.status == 0, "\(line): \(run.stderr)")
            #expect(run.stdout == reference.stdout, "\(line): \(run.stdout.count) bytes of \(reference.stdout.count)")
        }
    }

    /// Little-endian `value` in `bytes` bytes.
    static func littleEndian(_ value: UInt64, _ bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func word(_ data: [UInt8], _ at: Int, _ bytes: Int) -> Int {
        (0..<bytes).reduce(0) { $0 | Int(data[at + $1]) << (8 * $1) }
    }

    @Test("a Wr field claiming two members, or a few bytes more or less: every byte, as gzip reads it",
          arguments: [0, 2], [Int.min, -3, 5])
    func lyingGzipMember(member: Int, change: Int) throws {
        let scratch = Scratch()
        scratch.text("in", size: 1_500_000)
        #expect(try WeirProcess.run(["-q", "-B", "256K", "--format=gzip", "in"], in: scratch.url).status == 0)
        var bytes = [UInt8](scratch.data("in.gz")!)
        var start = 0
        for _ in 0..<member { start += Self.word(bytes, start + 16, 8) }
        let size = Self.word(bytes, start + 16, 8)
        // Int.min: the field claims this member and the next (issue 49's case).
        let claimed = change == Int.min ? size + Self.word(bytes, start + size + 16, 8) : size + change
        bytes.replaceSubrange(start + 16..<start + 24, with: Self.littleEndian(UInt64(claimed), 8))
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.path("bad.gz")))
        try Self.expectReadAsTool("gzip -dc", "bad.gz", scratch)
    }

    @Test("a weir .gz whose member's ISIZE is wrong is refused, as gzip refuses it, after the members before it")
    func wrongSize() throws {
        let scratch = Scratch()
        scratch.text("in", size: 1_000_000)
        #expect(try WeirProcess.run(["-q", "-B", "256K", "--format=gzip", "in"], in: scratch.url).status == 0)
        var bytes = [UInt8](scratch.data("in.gz")!)
        let first = Self.word(bytes, 16, 8)
        let second = Self.word(bytes, first + 16, 8)
        bytes[first + second - 1] ^= 1  // ISIZE's top byte of member 1
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.path("bad.gz")))
        #expect(try WeirProcess.shell("gzip -t bad.gz", in: scratch.url).status != 0)
        for line in Self.readers("bad.gz") {
            let run = try WeirProcess.shell(line, in: scratch.url)
            #expect(run.status != 0 && run.stderr.contains("gzip: "), "\(line): \(run.stderr)")
            // Member 0 at least, as gzip writes it (and the damaged member's
            // bytes with it, as the serial decoder writes them, as gzip does).
            if line.contains("-dc") {
                let original = scratch.data("in")!
                #expect(run.stdout.count >= 256 << 10 && original.prefix(run.stdout.count) == run.stdout,
                        "\(line): \(run.stdout.count) bytes")
            }
        }
    }

    @Test("lz4 frames whose content-size field is 0 decode as lz4 decodes them", arguments: [0, 1, 3])
    func lz4ZeroContentSize(frame: Int) throws {
        let scratch = Scratch()
        scratch.text("in", size: 1_500_000)
        #expect(try WeirProcess.run(["-q", "-B", "256K", "--format=lz4", "in"], in: scratch.url).status == 0)
        var bytes = [UInt8](scratch.data("in.lz4")!)
        var start = 0
        for _ in 0..<frame { start = Self.lz4FrameEnd(bytes, start) }
        // The field present (flag 0x08), its value 0, the header checksum made to agree.
        #expect(bytes[start + 4] & 0x08 != 0)
        bytes.replaceSubrange(start + 6..<start + 14, with: [UInt8](repeating: 0, count: 8))
        bytes[start + 14] = UInt8(truncatingIfNeeded: Self.xxh32(Array(bytes[start + 4..<start + 14])) >> 8)
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.path("zero.lz4")))
        try Self.expectReadAsTool("lz4 -dc", "zero.lz4", scratch)
    }

    /// Where the lz4 frame that starts at `start` ends (its block headers walked).
    static func lz4FrameEnd(_ bytes: [UInt8], _ start: Int) -> Int {
        let flags = bytes[start + 4]
        var at = start + 15
        while true {
            let header = word(bytes, at, 4)
            at += 4
            if header == 0 { break }
            at += header & 0x7FFF_FFFF + (flags & 0x10 != 0 ? 4 : 0)
        }
        return at + (flags & 0x04 != 0 ? 4 : 0)
    }

    /// XXH32 with seed 0 (lz4's header checksum is its second byte).
    static func xxh32(_ data: [UInt8]) -> UInt32 {
        let (p1, p2, p3, p4, p5): (UInt32, UInt32, UInt32, UInt32, UInt32) =
            (2_654_435_761, 2_246_822_519, 3_266_489_917, 668_265_263, 374_761_393)
        func lane(_ at: Int) -> UInt32 { UInt32(word(data, at, 4)) }
        func round(_ acc: UInt32, _ input: UInt32) -> UInt32 { rotl(acc &+ input &* p2, 13) &* p1 }
        func rotl(_ x: UInt32, _ r: UInt32) -> UInt32 { x << r | x >> (32 - r) }
        var at = 0
        var hash: UInt32
        if data.count >= 16 {
            var v = [p1 &+ p2, p2, 0, 0 &- p1]
            while at + 16 <= data.count {
                for k in 0..<4 { v[k] = round(v[k], lane(at + 4 * k)) }
                at += 16
            }
            hash = rotl(v[0], 1) &+ rotl(v[1], 7) &+ rotl(v[2], 12) &+ rotl(v[3], 18)
        } else {
            hash = p5
        }
        hash &+= UInt32(data.count)
        while at + 4 <= data.count {
            hash = rotl(hash &+ lane(at) &* p3, 17) &* p4
            at += 4
        }
        while at < data.count {
            hash = rotl(hash &+ UInt32(data[at]) &* p5, 11) &* p1
            at += 1
        }
        hash = (hash ^ hash >> 15) &* p2
        hash = (hash ^ hash >> 13) &* p3
        return hash ^ hash >> 16
    }
}
