import Testing
@testable import WeirFormats
@testable import WeirSystem

/// The one-pass decoder against libzstd's streaming decoder, the reference.
@Suite("Decompression context")
struct DecompressionContextTests {
    /// `source` decoded by `decompressFrame` into `capacity` bytes.
    static func decode(_ source: [UInt8], capacity: Int = 64) throws -> [UInt8] {
        let context = try DecompressionContext(windowLogMax: 27, verifyChecksum: true, path: "in")
        var output = [UInt8](repeating: 0, count: capacity)
        let count = try source.withUnsafeBytes { source in
            try output.withUnsafeMutableBytes { destination in
                try context.decompressFrame(source, into: destination)
            }
        }
        return Array(output[..<count])
    }

    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    @Test("a compressed block of size 0 is an empty block, as for ZSTD_decompressStream (issue 49's fuzz find)")
    func emptyCompressedBlock() throws {
        // A dictionary-ID byte (0), then one empty compressed last block.
        #expect(try Self.decode(Self.magic + [0x01, 0x24, 0x00, 0x05, 0x00, 0x00]) == [])
        // "hello" in a raw block, then an empty compressed last block; twice.
        let hello = Self.magic + [0x00, 0x00, 0x28, 0x00, 0x00] + Array("hello".utf8) + [0x05, 0x00, 0x00]
        #expect(try Self.decode(hello) == Array("hello".utf8))
        #expect(try Self.decode(hello + hello) == Array("hellohello".utf8))
    }

    @Test("what neither decoder accepts still fails: a reserved block type, a cut frame, too small a buffer")
    func stillFails() {
        #expect(throws: WeirError.self) { try Self.decode(Self.magic + [0x00, 0x00, 0x07, 0x00, 0x00]) }
        #expect(throws: WeirError.self) {
            try Self.decode(Self.magic + [0x00, 0x00, 0x28, 0x00, 0x00] + Array("hel".utf8))
        }
        let hello = Self.magic + [0x00, 0x00, 0x28, 0x00, 0x00] + Array("hello".utf8) + [0x05, 0x00, 0x00]
        #expect(throws: WeirError.self) { try Self.decode(hello, capacity: 4) }
    }
}
