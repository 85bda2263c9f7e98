import Testing
@testable import WeirPipeline
@testable import WeirTestSupport

/// Frames larger than the default budget holds (weir's own from -9 up)
/// grow the budget so that they still decode side by side, within its bounds.
@Suite("Decompression budget for large frames")
struct LargeFrameBudgetTests {
    /// 3 frames of 16 MiB and a short one: each above the 8 MiB share a
    /// worker gets by default, and above the 12 MiB a frame may take of it.
    static func largeFrames() throws -> (input: [UInt8], compressed: [UInt8]) {
        let block = TestData.text(1 << 20, seed: 41)
        let input = (0 ..< 48).flatMap { _ in block } + block.prefix(54321)
        return (input, try DecompressionPipelineTests.weir(input, chunk: 16 << 20, threads: 2))
    }

    @Test(
        """
        the budget a frame asks for: one buffer per worker and one waiting, held to the ceiling; nil with -M or a \
        small frame
        """
    )
    func budgetForFrame() {
        let two = DecompressionOptions(threads: 2)
        #expect(two.budget(forFrame: 8 << 20) == nil)
        #expect(two.budget(forFrame: 32 << 20) == 3 * (32 << 20) + (8 << 20))
        #expect(two.budget(forFrame: 64 << 20) == 3 * (64 << 20) + (8 << 20))
        #expect(two.budget(forFrame: 512 << 20) == two.largeFrameBudget)
        // A header may declare up to 2^64 - 1 bytes: the cap, no overflow
        // (the decoder fuzz target's crash of 2026-11-26).
        #expect(two.budget(forFrame: Int.max) == two.largeFrameBudget)
        #expect(two.budget(forFrame: Int.max - (1 << 20)) == two.largeFrameBudget)
        #expect(DecompressionOptions(memoryLimit: 1 << 30, threads: 2).budget(forFrame: 32 << 20) == nil)
        var held = two
        held.largeFrameBudget = 40 << 20
        #expect(held.budget(forFrame: 32 << 20) == 40 << 20)
    }

    @Test(
        """
        frames above the default share decode whole, not streamed, from a file and from a pipe, within the grown \
        budget
        """
    )
    func largeFramesWhole() throws {
        let (input, compressed) = try Self.largeFrames()
        let options = DecompressionOptions(threads: 2)
        let grown = try #require(options.budget(forFrame: 16 << 20))
        #expect(grown > options.inFlightBudget)
        for test in [false, true] {
            let (pipeline, statistics) = try DecompressionPipelineTests.decodeToNull(
                compressed, options: options, test: test)
            #expect(statistics.bytesOut == input.count)
            #expect(statistics.frames == 4)
            #expect(pipeline.framesStreamed == 0)
            #expect(pipeline.peakBytesInFlight <= grown)
            #expect(pipeline.peakBufferBytes <= grown)
        }
        let piped = DecompressionPipelineTests.decodePipe(compressed, options: options, pieceSize: 100_000)
        #expect(TestData.same(piped.output, input))
    }

    @Test(
        """
        one large frame, as zstd FILE writes it, streams within the default budget (issue 81); frames of one size \
        without a table: the first streams, the rest decode whole
        """
    )
    func loneFrameStreams() throws {
        let (input, _) = try Self.largeFrames()
        let options = DecompressionOptions(threads: 2)
        // 20 MiB in one frame that declares its size (level 1: the smallest that crosses the limit).
        let one = Array(input.prefix(20 << 20))
        for contentSize in [true, false] {
            let single = TestData.compress(one, level: 1, checksum: true, contentSize: contentSize)
            for test in [false, true] {
                let (pipeline, statistics) = try DecompressionPipelineTests.decodeToNull(
                    single, options: options, test: test)
                #expect(statistics.bytesOut == one.count)
                #expect(pipeline.framesStreamed == 1, "size declared: \(contentSize)")
                #expect(pipeline.peakBytesInFlight <= options.inFlightBudget)
                #expect(pipeline.peakBufferBytes <= options.inFlightBudget)
            }
        }
        let bare = try DecompressionPipelineTests.weir(input, chunk: 16 << 20, threads: 2, seekTable: false)
        let (pipeline, statistics) = try DecompressionPipelineTests.decodeToNull(bare, options: options)
        #expect(statistics.bytesOut == input.count)
        #expect(statistics.frames == 4)
        #expect(pipeline.framesStreamed == 1)
        let piped = DecompressionPipelineTests.decodePipe(bare, options: options, pieceSize: 100_000)
        #expect(TestData.same(piped.output, input))
    }

    @Test("with -M, or a ceiling below two frames, large frames stream through one decoder within the budget")
    func boundedBudgetStreams() throws {
        let (input, compressed) = try Self.largeFrames()
        var ceiling = DecompressionOptions(threads: 2)
        ceiling.largeFrameBudget = 20 << 20
        for options in [DecompressionOptions(memoryLimit: 24 << 20, threads: 2), ceiling] {
            let bound = max(options.inFlightBudget, options.budget(forFrame: 16 << 20) ?? 0)
            let (pipeline, statistics) = try DecompressionPipelineTests.decodeToNull(compressed, options: options)
            #expect(statistics.bytesOut == input.count)
            #expect(pipeline.framesStreamed == 3)
            #expect(pipeline.peakBytesInFlight <= bound)
            #expect(pipeline.peakBufferBytes <= bound)
        }
    }
}
