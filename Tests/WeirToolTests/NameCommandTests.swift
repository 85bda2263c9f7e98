import Foundation
import Testing
import Glibc

/// Names are any bytes but NUL, as for zstd and tar: weir takes them from
/// `argv` as bytes and acts on exactly those files.
@Suite("weir names that are not UTF-8")
struct NameCommandTests {
    /// `in`, byte 0xFF, `x`: not UTF-8.
    static let invalid = Array("in".utf8) + [0xFF] + Array("x".utf8)
    /// `u` and the valid UTF-8 of U+10FF80, a scalar weir uses to escape a
    /// byte: it must still name these four bytes.
    static let escapeLike = Array("u".utf8) + [0xF4, 0x8F, 0xBE, 0x80]
    static let zst = Array(".zst".utf8)

    static func contents(_ seed: Int) -> [UInt8] {
        (0 ..< 200_000).map { UInt8(truncatingIfNeeded: ($0 / 7) &* seed) }
    }

    /// Whether the file `name` holds `contents(seed)` (a Bool, so that a
    /// failure does not print both arrays).
    static func holds(_ scratch: Scratch, _ name: [UInt8], _ seed: Int) -> Bool {
        scratch.contents(bytes: name) == contents(seed)
    }

    static func sorted(_ names: [[UInt8]]) -> [[UInt8]] {
        names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    @Test("NAME gives exactly NAME.zst, -d gives NAME back byte for byte, --rm removes those files")
    func roundTrip() throws {
        let scratch = Scratch()
        scratch.create(bytes: Self.invalid, contents: Self.contents(3))
        scratch.create(bytes: Self.escapeLike, contents: Self.contents(5))
        let compressed = try WeirProcess.run(bytes: [Array("-v".utf8), Self.invalid, Self.escapeLike], in: scratch.url)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        #expect(scratch.entries == Self.sorted([Self.invalid, Self.invalid + Self.zst,
                                                Self.escapeLike, Self.escapeLike + Self.zst]))
        #expect(compressed.stderr.contains("in\\xFFx.zst)"), "\(compressed.stderr)")
        #expect(compressed.stderr.contains("u\\xF4\\x8F\\xBE\\x80.zst)"), "\(compressed.stderr)")

        let listed = try WeirProcess.run(bytes: [Array("-l".utf8), Self.invalid + Self.zst], in: scratch.url)
        #expect(String(decoding: listed.stdout, as: UTF8.self).contains("  in\\xFFx.zst\n"))

        // -f replaces the .zst files, --rm then removes the inputs.
        let replaced = try WeirProcess.run(
            bytes: [Array("-qf".utf8), Array("--rm".utf8), Self.invalid, Self.escapeLike],
            in: scratch.url)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(scratch.entries == Self.sorted([Self.invalid + Self.zst, Self.escapeLike + Self.zst]))

        let restored = try WeirProcess.run(
            bytes: [
                Array("-dq".utf8), Array("--rm".utf8),
                Self.invalid + Self.zst, Self.escapeLike + Self.zst,
            ], in: scratch.url)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(scratch.entries == Self.sorted([Self.invalid, Self.escapeLike]))
        #expect(Self.holds(scratch, Self.invalid, 3))
        #expect(Self.holds(scratch, Self.escapeLike, 5))
    }

    @Test("-o takes such a name, and the output may not be the input")
    func outputName() throws {
        let scratch = Scratch()
        scratch.create(bytes: Self.invalid, contents: Self.contents(3))
        let output = Array("out".utf8) + [0xFE]
        let back = Array("back".utf8) + [0x80, 0xC3]
        let compressed = try WeirProcess.run(bytes: [Array("-q".utf8), Self.invalid, Array("-o".utf8), output],
                                             in: scratch.url)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        let restored = try WeirProcess.run(bytes: [Array("-dq".utf8), output, Array("-o".utf8), back], in: scratch.url)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(scratch.entries == Self.sorted([Self.invalid, output, back]))
        #expect(Self.holds(scratch, back, 3))

        let same = try WeirProcess.run(bytes: [Array("-f".utf8), Self.invalid, Array("-o".utf8), Self.invalid],
                                       in: scratch.url)
        #expect(same.status == 1)
        #expect(same.stderr == "weir: in\\xFFx: output is the input file\n")
        #expect(Self.holds(scratch, Self.invalid, 3))
    }

    @Test("messages show bytes that are not UTF-8, and control characters, as \\xFF, on one line")
    func messages() throws {
        let scratch = Scratch()
        let missing = try WeirProcess.run(bytes: [Array("-q".utf8), Array("missing".utf8) + [0xFF], Array("a\nb".utf8)],
                                          in: scratch.url)
        #expect(missing.status == 1)
        #expect(missing.stderr == """
            weir: missing\\xFF: open failed: No such file or directory
            weir: a\\x0Ab: open failed: No such file or directory

            """)
        #expect(scratch.entries.isEmpty)
        let usage = try WeirProcess.run(bytes: [Array("--fats".utf8) + [0xFF]], in: scratch.url)
        #expect(usage.status == 1)
        #expect(usage.stderr.hasPrefix("Error: Unknown option '--fats\\xFF'"), "\(usage.stderr)")
    }

    /// The bytes a `--json` name stands for: each character U+10FF80…U+10FFFF
    /// is the byte it escapes (U+10FF00 + byte), the rest is UTF-8 — the
    /// rule README gives consumers.
    static func bytes(ofJSONName name: String) -> [UInt8] {
        name.unicodeScalars.flatMap { scalar -> [UInt8] in
            scalar.value >= 0x10FF80 ? [UInt8(scalar.value - 0x10FF00)] : Array(String(scalar).utf8)
        }
    }

    @Test("--json parses as JSON and carries the names losslessly")
    func json() throws {
        let scratch = Scratch()
        scratch.create(bytes: Self.invalid, contents: Self.contents(3))
        scratch.create(bytes: Self.escapeLike, contents: Self.contents(5))
        let missing = Array("gone".utf8) + [0xFF]
        let run = try WeirProcess.run(bytes: [Array("--json".utf8), Self.invalid, Self.escapeLike, missing],
                                      in: scratch.url)
        #expect(run.status == 1)
        let records = try run.stderr.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        try #require(records.count == 4, "\(run.stderr)")
        let names = records.prefix(3).map { record in
            [record["input"], record["output"]].map { ($0 as? String).map(Self.bytes(ofJSONName:)) }
        }
        #expect(names[0] == [Self.invalid, Self.invalid + Self.zst])
        #expect(names[1] == [Self.escapeLike, Self.escapeLike + Self.zst])
        #expect(names[2][0] == missing)
        #expect(records[2]["error"] as? String == "gone\\xFF: open failed: No such file or directory")
        #expect(records[3]["total"] as? Bool == true)
    }
}
