import Dispatch
import Foundation
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Content-defined chunks (--rsyncable)")
struct RsyncableChunkerTests {
    /// The chunks of `input`, read in pieces of the lengths the chunker asks for.
    static func chunks(_ input: [UInt8], chunkSize: Int) throws -> [[UInt8]] {
        var chunker = RsyncableChunker(chunkSize: chunkSize)
        var offset = 0
        var chunks: [[UInt8]] = []
        while true {
            let chunk = try chunker.next { (length) throws(WeirError) in
                let end = min(input.count, offset + length)
                let piece = input[offset ..< end].withUnsafeBytes { DispatchData(bytes: $0) }
                offset = end
                return (piece, piece.count < length)
            }
            chunks.append(Array(chunk.data))
            if chunk.endOfInput { break }
        }
        return chunks
    }

    /// `input` with one byte inserted at `position`.
    static func inserting(_ input: [UInt8], at position: Int) -> [UInt8] {
        Array(input[..<position]) + [0x42] + Array(input[position...])
    }

    @Test("chunks put back together are the input; each between half and twice the chunk size but the last",
          arguments: [0, 1, 65536, 1_000_003, 3_000_000])
    func cover(size: Int) throws {
        for input in [TestData.text(size, seed: 4), TestData.random(size, seed: 4)] {
            let chunks = try Self.chunks(input, chunkSize: 64 << 10)
            #expect(Array(chunks.joined()) == input)
            for chunk in chunks.dropLast() { #expect((32 << 10) < chunk.count && chunk.count <= 128 << 10) }
            if size > 1 << 20 {
                let average = Double(size) / Double(chunks.count)
                #expect(average > Double(48 << 10) && average < Double(112 << 10), "average \(average)")
            }
        }
    }

    @Test("a byte inserted near the start changes only the chunks around it")
    func resynchronises() throws {
        for input in [TestData.text(4_000_000, seed: 9), TestData.random(4_000_000, seed: 9)] {
            let before = try Self.chunks(input, chunkSize: 64 << 10)
            let after = try Self.chunks(Self.inserting(input, at: 100_000), chunkSize: 64 << 10)
            let unchanged = Set(before.map { Data($0) }).intersection(after.map { Data($0) })
            #expect(Double(unchanged.count) >= 0.95 * Double(before.count), "\(unchanged.count) of \(before.count)")
        }
    }

    @Test("the pipeline's frames stay byte-identical after an insertion, and decode to the input")
    func frames() throws {
        let input = TestData.text(3_000_000, seed: 12)
        func compress(_ bytes: [UInt8], pieceSize: Int) throws -> [Data] {
            var options = CompressionOptions(level: 3, threads: 2, chunkSize: 64 << 10)
            options.rsyncable = true
            let outcome = PipeHarness.run(input: bytes, pieceSize: pieceSize) { inFD, outFD in
                CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                    inputName: "in", outputName: "out", options: options).result()
            }
            _ = try outcome.result.get()
            #expect(TestData.same(TestData.zstdDecode(outcome.output), bytes))
            var offset = 0
            return TestData.frames(outcome.output).dropLast().map { frame in
                defer { offset += frame.size }
                return Data(outcome.output[offset ..< offset + frame.size])
            }
        }
        let before = try compress(input, pieceSize: 65536)
        let after = try compress(Self.inserting(input, at: 1000), pieceSize: 7919)
        let unchanged = Set(before).intersection(after)
        #expect(Double(unchanged.count) >= 0.95 * Double(before.count), "\(unchanged.count) of \(before.count)")
    }
}
