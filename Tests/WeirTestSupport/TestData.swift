import CZstd
import Foundation
import Glibc

/// Inputs and helpers shared by the engine tests.
package enum TestData {
    /// Compressible bytes: words from a small vocabulary, seeded.
    package static func text(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        let words = ["weir", "river", "stream", "dispatch", "queue", "frame", "chunk", "zstd ", "\n", "data", "flow"]
        var generator = SeededGenerator(seed: seed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 16)
        while bytes.count < count {
            bytes += Array(words[Int(generator.next() % UInt64(words.count))].utf8)
            bytes.append(UInt8(ascii: " "))
        }
        return Array(bytes.prefix(count))
    }

    /// Incompressible bytes, seeded.
    static func random(_ count: Int, seed: UInt64 = 2) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// A temporary folder removed by the caller.
    package static func temporaryFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs a real zstd tool (`/usr/bin/zstd`, `/usr/bin/pzstd`) on `input`,
    /// written to a temporary file, and returns its output file's bytes.
    static func realTool(_ path: String, _ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("in")
        let target = folder.appendingPathComponent("out")
        try Data(input).write(to: source)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments + ["-q", "-f", source.path, "-o", target.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ToolFailed(path: path, status: process.terminationStatus) }
        return Array(try Data(contentsOf: target))
    }

    /// A real tool exited with a failure status.
    struct ToolFailed: Error { var path: String; var status: Int32 }

    /// Decodes a whole zstd stream with libzstd's one-shot streaming API,
    /// independently of weir's decoder.
    static func zstdDecode(_ compressed: [UInt8]) -> [UInt8]? {
        guard let dctx = ZSTD_createDCtx() else { return nil }
        defer { ZSTD_freeDCtx(dctx) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var frameComplete = true
        let ok: Bool = compressed.withUnsafeBytes { source in
            var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                let before = input.pos
                var result = 0
                let produced: Int = chunk.withUnsafeMutableBytes { destination in
                    var out = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: 0)
                    result = ZSTD_decompressStream(dctx, &out, &input)
                    return out.pos
                }
                if ZSTD_isError(result) != 0 { return false }
                output += chunk.prefix(produced)
                if produced == 0 && input.pos == before { break }
                frameComplete = result == 0
            }
            return true
        }
        guard frameComplete else { return nil }
        return ok ? output : nil
    }

    /// Whether two byte arrays are equal, without printing them on failure.
    static func same(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool { a == b }

    /// The zstd frames of a stream: (content size declared, has checksum).
    static func frames(_ compressed: [UInt8]) -> [(contentSize: UInt64, size: Int)] {
        var frames: [(UInt64, Int)] = []
        compressed.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let base = bytes.baseAddress! + offset
                let size = ZSTD_findFrameCompressedSize(base, bytes.count - offset)
                if ZSTD_isError(size) != 0 { return }
                frames.append((ZSTD_getFrameContentSize(base, bytes.count - offset), size))
                offset += size
            }
        }
        return frames
    }
}

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
