import Foundation

/// What the programs' tests write into files: only their sizes and bytes
/// matter, not what the engine's tests (WeirTests' TestData) model.
enum TestData {
    /// `count` bytes of words, the same for the same seed.
    static func text(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        let words = ["weir", "river", "stream", "frame", "chunk", "zstd", "sample", "\n"]
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 16)
        while bytes.count < count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes += Array(words[Int(state % UInt64(words.count))].utf8) + [UInt8(ascii: " ")]
        }
        return Array(bytes.prefix(count))
    }

    /// A temporary folder removed by the caller.
    static func temporaryFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
