import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirTestSupport

/// Inputs that are not zstd, through the one entry: weir's own gzip, lz4
/// and xz files decode their members on the pipeline's workers, within its
/// budget; other formats before and after zstd frames decode as one stream.
@Suite("Decompression pipeline: other formats")
struct OtherFormatStreamTests {
    /// `input` written by weir in `format`, in members of `chunk` bytes.
    static func weir(_ input: [UInt8], format: CompressedFormat, chunk: Int) throws -> [UInt8] {
        var options = CompressionOptions(level: 1, threads: 2, chunkSize: chunk, seekTable: false)
        options.format = format
        let outcome = PipeHarness.run(input: input) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "in", outputName: "out", options: options).result()
        }
        _ = try outcome.result.get()
        return outcome.output
    }

    /// Decodes `compressed` from a file (mapped) into a file; returns the
    /// pipeline (for its peaks), what it did and the output.
    static func decodeFile(_ compressed: [UInt8],
                           options: DecompressionOptions) throws -> (DecompressionPipeline, Statistics, [UInt8]) {
        let (output, result, pipeline) = TestDecompression.file(compressed, options: options)
        return (pipeline, try result.get(), output)
    }

    @Test("weir's gzip, lz4 and xz members decode whole on the pipeline's workers, within its budget",
          arguments: [CompressedFormat.gzip, .lz4, .xz])
    func membersOnTheWorkers(format: CompressedFormat) throws {
        let input = TestData.text(9_000_000, seed: 54)
        let compressed = try Self.weir(input, format: format, chunk: 2 << 20)  // 5 members of 2 MiB or less
        let options = DecompressionOptions(memoryLimit: 16 << 20, threads: 2)
        let (pipeline, statistics, output) = try Self.decodeFile(compressed, options: options)
        #expect(TestData.same(output, input))
        #expect(statistics.frames == 5)
        #expect(statistics.bytesIn == compressed.count)
        #expect(pipeline.peakBytesInFlight <= options.inFlightBudget)
        // Each member in a buffer of its own size: the serial decoder's are 1 MiB.
        #expect(pipeline.peakBufferBytes >= 2 << 20)
        // One worker: the serial decoder, in 1 MiB blocks; the same bytes.
        let (_, counted, same) = try Self.decodeFile(compressed, options: DecompressionOptions(threads: 1))
        #expect(TestData.same(same, input))
        #expect(counted.frames == 5)
    }

    @Test("zstd frames then a .gz, and a .gz then zstd frames, decode as one stream, from a file and a pipe")
    func formatsInTurn() throws {
        let first = TestData.text(3_000_000, seed: 1)
        let second = TestData.text(2_500_000, seed: 2)
        let zstd = try DecompressionPipelineTests.weir(first, chunk: 1 << 20, seekTable: false)
        let gzip = try Self.weir(second, format: .gzip, chunk: 1 << 20)
        for (compressed, content) in [(zstd + gzip, first + second), (gzip + zstd, second + first)] {
            let (_, statistics, output) = try Self.decodeFile(compressed, options: DecompressionOptions(threads: 2))
            #expect(TestData.same(output, content))
            #expect(statistics.frames == 6)  // 3 frames and 3 members
            #expect(statistics.bytesIn == compressed.count)
            let piped = DecompressionPipelineTests.decodePipe(compressed, pieceSize: 50_000)
            #expect(TestData.same(piped.output, content))
            #expect((try? piped.result.get())?.frames == 6)
        }
    }
}
