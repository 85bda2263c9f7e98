import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// One large frame, as `zstd` writes it, decoded on all the workers
/// (``ParallelFrameDecoder``, issue 81) through the pipeline: from a file
/// and from pipes whose pieces cut blocks anywhere, the source's bytes; a
/// damaged copy writes what libzstd's path (one thread) writes, as far as
/// both go, and fails as it does. Also what the thread sanitizer runs over
/// the decoder's hand-offs (scripts/test).
@Suite("One frame decoded on all the workers")
struct ParallelFrameDecoderTests {
    /// 20 MB of text in one frame from libzstd: past the 12 MiB a frame may
    /// take to be decoded whole at two threads, so it streams.
    static let input = TestData.text(20_000_000, seed: 81)

    /// `input` as one frame at `level`, with its content checksum, and its
    /// size in the header unless `unsized`.
    static func frame(level: Int32, unsized: Bool = false) -> [UInt8] {
        TestData.compress(input, level: level, checksum: true, contentSize: !unsized)
    }

    @Test("the source's bytes at 2 and 3 threads, from a file and from pipes cut anywhere",
          arguments: [(Int32(1), false), (Int32(3), true), (Int32(19), false)])
    func decodes(level: Int32, unsized: Bool) throws {
        let compressed = Self.frame(level: level, unsized: unsized)
        for threads in [2, 3] {
            let options = DecompressionOptions(threads: threads)
            let file = DecompressionPipelineTests.decodeFile(compressed, options: options)
            #expect(TestData.same(file.output, Self.input), "-\(level) -T\(threads), from a file")
            for pieceSize in [65536, 100_003, 7] where pieceSize > 7 || threads == 2 && level == 1 {
                let piped = DecompressionPipelineTests.decodePipe(compressed, options: options, pieceSize: pieceSize)
                #expect(TestData.same(piped.output, Self.input), "-\(level) -T\(threads), pieces of \(pieceSize)")
            }
            let (pipeline, statistics) = try DecompressionPipelineTests.decodeToNull(compressed, options: options,
                                                                                     test: true)
            #expect(statistics.bytesOut == Self.input.count && pipeline.framesStreamed == 1)
        }
    }

    @Test("a damaged frame: the bytes one thread writes, as far as both go, and its failure")
    func damaged() throws {
        let compressed = Self.frame(level: 3)
        for k in 0 ..< 8 {
            var bytes = compressed
            let position = 18 + (bytes.count - 22) * (2 * k + 1) / 16
            bytes[position] ^= UInt8(1 << (k % 8))
            let serial = DecompressionPipelineTests.decodeFile(bytes, options: DecompressionOptions(threads: 1))
            let parallel = DecompressionPipelineTests.decodeFile(bytes, options: DecompressionOptions(threads: 2))
            let (serialError, parallelError) = (DecompressionPipelineTests.failure(serial),
                                                DecompressionPipelineTests.failure(parallel))
            #expect(serialError != nil && parallelError != nil, "flip at \(position)")
            // As far as both go; -T2 up to one 1 MiB piece further: libzstd's stream drops the
            // block it decoded before the failing one (OneFrameCommandTests.damagedLikeLibzstd).
            let common = min(serial.output.count, parallel.output.count)
            #expect(serial.output.prefix(common) == parallel.output.prefix(common), "flip at \(position)")
            #expect(parallel.output.count <= serial.output.count + (1 << 20), "flip at \(position)")
        }
    }
}
