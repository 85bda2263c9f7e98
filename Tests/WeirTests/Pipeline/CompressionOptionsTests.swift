import Testing
@testable import Weir

/// The chunk and window `--long` gives.
@Suite("Compression options")
struct CompressionOptionsTests {
    @Test("--long=N raises the chunk to the window (at most 1 GiB) and compresses with that window")
    func longChunk() {
        let long = CompressionOptions(threads: 2, longWindowLog: 27)
        #expect(long.resolvedChunkSize == 1 << 27)
        #expect(long.resolvedWindowLog == 27)
        #expect(CompressionOptions(threads: 2, longWindowLog: 20).resolvedChunkSize == CompressionOptions.defaultChunkSize)
        #expect(CompressionOptions(threads: 2, chunkSize: 1 << 29, longWindowLog: 27).resolvedChunkSize == 1 << 29)
        #expect(CompressionOptions(threads: 2, longWindowLog: 31).resolvedChunkSize == 1 << 30)
        #expect(CompressionOptions(threads: 2).resolvedWindowLog == 22)
    }

    @Test("a small file is never cut below the window: under it, one frame")
    func fittedNeverBelowWindow() {
        let long = CompressionOptions(threads: 2, longWindowLog: 24)
        #expect(long.fitted(toInputSize: 20 << 20).chunkSize == 1 << 24)
        #expect(long.fitted(toInputSize: 40 << 20).chunkSize == 1 << 24)
        #expect(long.fitted(toInputSize: nil).chunkSize == 1 << 24)
        // Under the window, one chunk of the file's size, in 64 KiB.
        #expect(long.fitted(toInputSize: 10 << 20).chunkSize == 10 << 20)
        #expect(long.fitted(toInputSize: 100_000).chunkSize == 128 << 10)
        #expect(long.fitted(toInputSize: 0).chunkSize == 64 << 10)
        // Without --long, a 5 MiB file is still cut in two for two workers.
        #expect(CompressionOptions(threads: 2).fitted(toInputSize: 5 << 20).chunkSize == (5 << 19))
    }

    @Test("a --long window above the default chunk reads files instead of mapping them; --no-mmap always reads")
    func mapping() {
        #expect(CompressionOptions().resolvedMapInput)
        #expect(CompressionOptions(longWindowLog: 23).resolvedMapInput)
        #expect(!CompressionOptions(longWindowLog: 24).resolvedMapInput)
        #expect(!CompressionOptions(mapInput: false).resolvedMapInput)
    }
}
