import Foundation
import Testing

/// `weir -d` of a damaged zstd file (issue 59): every whole frame before the
/// damage is written, in order, then exit 1 naming the file and an offset;
/// never a byte of the damaged frame. zstd writes the same frames (and the
/// damaged frame's start, which weir does not).
@Suite("weir -d: the whole frames before damage")
struct DamagePrefixCommandTests {
    /// The damage, each made on weir's file of 4 MiB in 1 MiB frames.
    enum Damage: String, CaseIterable {
        /// The file, then a zstd magic number followed by another whole file:
        /// the second magic's first byte reads as a descriptor with its
        /// reserved bit set, found by the scan after the file's last frame.
        case badMagic
        /// Frame 2's first block header gets the reserved block type (a scan error).
        case badBlock
        /// One byte of frame 2's raw block flipped (the content checksum).
        case checksum
        /// The file cut in the middle of frame 2.
        case cut
    }

    /// Makes `bad.zst` with `damage` and returns the content of the whole
    /// frames before it.
    private func damaged(_ damage: Damage, _ scratch: Scratch) throws -> Data {
        // Random bytes: raw blocks, ~1 MiB a frame compressed; text for the block case.
        let make = damage == .badBlock ? "" : "head -c 4194304 /dev/urandom > a && "
        if damage == .badBlock { scratch.text("a", size: 4 << 20, seed: 5) }
        _ = try FormatsCommandTests.sh(make + "$WEIR -q -f -B1M a -o a.zst && head -c 2097152 a > head "
                                       + "&& $WEIR -q -f -B1M --no-seek-table head -o head.zst", scratch)
        let original = try #require(scratch.data("a"))
        let whole = try #require(scratch.data("a.zst"))
        // Frame 2 starts where the file of the first two frames ends.
        let start = try #require(scratch.data("head.zst")).count
        var bytes = whole
        switch damage {
        case .badMagic:
            bytes = whole + Data([0x28, 0xB5, 0x2F, 0xFD]) + whole
        case .badBlock:
            let descriptor = bytes[start + 4]
            let single = descriptor & 0x20 != 0
            let sizes = [single ? 1 : 0, 2, 4, 8]
            let header = 5 + (single ? 0 : 1) + [0, 1, 2, 4][Int(descriptor & 3)] + sizes[Int(descriptor >> 6)]
            bytes[start + header] |= 0x06
        case .checksum:
            bytes[start + 500_000] ^= 0xFF
        case .cut:
            bytes = bytes.prefix(start + 500_000)
        }
        _ = FileManager.default.createFile(atPath: scratch.path("bad.zst"), contents: bytes)
        return damage == .badMagic ? original : original.prefix(2 << 20)
    }

    @Test("from a file and a pipe, at -T1 and -T2: the whole frames before the damage, then exit 1 naming an offset",
          arguments: Damage.allCases)
    func wholeFramesBefore(damage: Damage) throws {
        let scratch = Scratch()
        let before = try damaged(damage, scratch)
        // zstd writes those frames too (and, but for a scan error, the damaged one's start).
        let reference = try WeirProcess.shell("zstd -dc bad.zst", in: scratch.url)
        #expect(reference.status != 0 && reference.stdout.prefix(before.count) == before,
                "zstd: \(reference.stdout.count) bytes")
        for line in ["$WEIR -dc -T1 bad.zst", "$WEIR -dc -T2 bad.zst", "cat bad.zst | $WEIR -dc -T1",
                     "cat bad.zst | $WEIR -dc -T2"] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            // A Bool: a failed `==` of two large Data would be diffed in the report.
            let same = run.stdout == before
            #expect(run.status == 1 && same, "\(damage) \(line): \(run.stdout.count) bytes, not \(before.count)")
            let named = line.hasPrefix("cat") ? "weir: (stdin): " : "weir: bad.zst: "
            #expect(run.stderr.hasPrefix(named) && run.stderr.contains("offset"), "\(damage) \(line): \(run.stderr)")
        }
        // -t writes nothing and fails the same way.
        let test = try WeirProcess.shell("$WEIR -t bad.zst", in: scratch.url)
        #expect(test.status == 1 && test.stdout.isEmpty, "\(damage): -t \(test.status)")
    }

    @Test("gzip, xz and lz4 members: from a file and a pipe, at -T1 and -T2, the whole members before the damage",
          arguments: [("gzip", "gzip -dc"), ("xz", "xz -dc"), ("lz4", "lz4 -dc")], [Damage.checksum, .cut])
    func wholeMembersBefore(format: (name: String, reference: String), damage: Damage) throws {
        let scratch = Scratch()
        let write = "$WEIR -q -f -c -B1M --format=\(format.name)"
        _ = try FormatsCommandTests.sh("head -c 4194304 /dev/urandom > a && \(write) a > a.z && "
                                       + "head -c 2097152 a > head && \(write) head > head.z", scratch)
        // Member 2 starts where the file of the first two members ends.
        let start = try #require(scratch.data("head.z")).count
        var bytes = try #require(scratch.data("a.z"))
        if damage == .checksum { bytes[start + 500_000] ^= 0xFF } else { bytes = bytes.prefix(start + 500_000) }
        _ = FileManager.default.createFile(atPath: scratch.path("bad.z"), contents: bytes)
        let before = try #require(scratch.data("a")).prefix(2 << 20)
        // The format's own tool writes those members too, and then some of the damaged one.
        let reference = try WeirProcess.shell("\(format.reference) < bad.z", in: scratch.url)
        #expect(reference.status != 0 && reference.stdout.prefix(before.count) == before,
                "\(format.reference): \(reference.stdout.count) bytes")
        for line in ["$WEIR -dc -T1 bad.z", "$WEIR -dc -T2 bad.z", "cat bad.z | $WEIR -dc -T1",
                     "cat bad.z | $WEIR -dc -T2"] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            let same = run.stdout == before
            #expect(run.status == 1 && same, "\(format.name) \(damage) \(line): \(run.stdout.count) bytes")
            let named = line.hasPrefix("cat") ? "weir: (stdin): " : "weir: bad.z: "
            #expect(run.stderr.hasPrefix(named) && run.stderr.contains("offset"), "\(line): \(run.stderr)")
        }
    }
}
