import Foundation
import Testing
import Weir

// README example: begin
import Foundation
import Weir

func archive(_ path: String) async throws -> Data {
    // A file: writes path.zst, safely, on every core.
    let compressor = Compressor(options: CompressionOptions(level: 19, checksum: true))
    let statistics = try await compressor.compress(file: path)
    print("\(path): \(statistics.bytesIn) → \(statistics.bytesOut) bytes")

    // A stream: any AsyncSequence of Data (or DispatchData, [UInt8]) chunks in, Data out.
    let lines = AsyncStream { continuation in
        continuation.yield(Data("hello, ".utf8))
        continuation.yield(Data("weir\n".utf8))
        continuation.finish()
    }
    var compressed = Data()
    for try await piece in compressor.compress(lines) { compressed.append(piece) }

    // In memory, with a memory budget for decoding.
    let decompressor = Decompressor(options: DecompressionOptions(memoryLimit: 64 << 20))
    return try await decompressor.decompress(compressed)  // "hello, weir\n"
}
// README example: end

/// The library example in README.md is this file's code, compiled and run
/// here, so that it cannot rot.
@Suite("README library example")
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("README's Swift example is the code compiled here")
    func readmeMatches() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Using the library"))
        let after = readme[section.upperBound...]
        let open = try #require(after.range(of: "```swift\n"))
        let close = try #require(after[open.upperBound...].range(of: "```"))
        let snippet = String(after[open.upperBound..<close.lowerBound])
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README example: begin\n"))
        let end = try #require(source.range(of: "// README example: end\n"))
        #expect(String(source[begin.upperBound..<end.lowerBound]) == snippet)
    }

    @Test("the example runs")
    func exampleRuns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weir-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notes.txt").path
        try Data(repeating: UInt8(ascii: "w"), count: 100_000).write(to: URL(fileURLWithPath: path))
        let text = try await archive(path)
        #expect(String(decoding: text, as: UTF8.self) == "hello, weir\n")
        #expect(FileManager.default.fileExists(atPath: path + ".zst"))
    }
}
