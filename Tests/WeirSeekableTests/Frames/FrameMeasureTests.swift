import CZstd
import Foundation
import Testing
@testable import WeirPipeline
@testable import WeirSeekable
@testable import WeirSystem
@testable import WeirTestSupport

/// Frames without a content size, measured by decoding them in parallel:
/// the sizes are the frames' real content, on every path (decoded whole,
/// streamed from the bytes read, streamed a piece at a time), and a bad
/// frame fails naming the first bad frame in order.
@Suite("Frame measure")
struct FrameMeasureTests {
    typealias Folder = ScratchFolder

    /// One zstd frame of `content` that does not declare its content size,
    /// made by the system's libzstd (as pzstd makes its frames).
    static func unsizedFrame(_ content: [UInt8], checksum: Bool = true) -> [UInt8] {
        zstdFrame(content, sized: false, checksum: checksum)
    }

    /// One zstd frame of `content` at `level`, made by the system's libzstd
    /// (as `zstd` makes one: its size in the header when `sized`).
    static func zstdFrame(_ content: [UInt8], level: Int32 = 3, sized: Bool, checksum: Bool = true) -> [UInt8] {
        let cctx = ZSTD_createCCtx()
        defer { ZSTD_freeCCtx(cctx) }
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, sized ? 1 : 0)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0)
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(content.count))
        let written = content.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                ZSTD_compress2(cctx, destination.baseAddress, destination.count, source.baseAddress, source.count)
            }
        }
        precondition(ZSTD_isError(written) == 0)
        return Array(output.prefix(written))
    }

    /// pzstd's skippable frame before each zstd frame: 4 bytes of payload.
    static let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4]

    /// The contents of the test file's frames: empty, one byte, text, and
    /// incompressible bytes (raw blocks) of more than 1 MiB compressed.
    static let contents: [[UInt8]] = [
        [], [7], TestData.text(300_000, seed: 5), TestData.random(1_200_000, seed: 6),
        TestData.text(2_000_000, seed: 7), TestData.text(50_000, seed: 8),
    ]

    /// The test file: each frame after a skippable one, as pzstd writes them.
    static func file(_ contents: [[UInt8]] = contents) -> [UInt8] {
        contents.flatMap { skippable + unsizedFrame($0) }
    }

    /// The zstd frames of the file at `path`, as its listing finds them.
    static func frames(_ path: String) throws(WeirError) -> [FrameListing.Frame] {
        try FrameListing.read(path: path).frames.filter { !$0.isSkippable }
    }

    /// `frames` of the file at `path` measured.
    static func measure(_ path: String, _ frames: [FrameListing.Frame], options: DecompressionOptions,
                        wholeFrameLimit: Int = SeekableReader.cacheableFrameSize) throws(WeirError) -> [Int] {
        let file = try Descriptor.openForReading(path)
        defer { file.close() }
        return try FrameMeasure.contentSizes(of: frames, in: file, options: options, wholeFrameLimit: wholeFrameLimit)
    }

    @Test("the sizes are the frames' content, decoded whole or streamed, on one worker or several",
          arguments: [(1, SeekableReader.cacheableFrameSize), (3, SeekableReader.cacheableFrameSize),
                      (3, 200_000), (2, 100)])
    func sizes(threads: Int, wholeFrameLimit: Int) throws {
        let folder = Folder()
        folder.write("data.zst", Self.file())
        let frames = try Self.frames(folder.path("data.zst"))
        #expect(frames.map(\.index) == [1, 3, 5, 7, 9, 11])
        let sizes = try Self.measure(folder.path("data.zst"), frames, options: DecompressionOptions(threads: threads),
                                     wholeFrameLimit: wholeFrameLimit)
        #expect(sizes == Self.contents.map(\.count))
        #expect(try Self.measure(folder.path("data.zst"), [], options: DecompressionOptions()).isEmpty)
    }

    @Test("pzstd's frames measure as libzstd decodes them, and the reader reads them, whole or streamed")
    func pzstd() throws {
        let folder = Folder()
        let content = TestData.text(5_000_000, seed: 9)
        let bytes = try TestData.realTool("/usr/bin/pzstd", ["-p", "2", "-1"], input: content)
        folder.write("data.zst", bytes)
        let frames = try Self.frames(folder.path("data.zst"))
        #expect(frames.count > 1, "pzstd made \(frames.count) frame")
        let decoded = frames.map { frame in
            TestData.zstdDecode(Array(bytes[frame.offset ..< frame.offset + frame.compressedSize]))?.count
        }
        for limit in [SeekableReader.cacheableFrameSize, 300_000] {
            let sizes = try Self.measure(folder.path("data.zst"), frames, options: DecompressionOptions(),
                                         wholeFrameLimit: limit)
            #expect(sizes == decoded.map { $0 ?? -1 } && sizes.reduce(0, +) == content.count, "\(limit)")
            let reader = try SeekableReader(path: folder.path("data.zst"), options: DecompressionOptions(),
                                            wholeFrameLimit: limit)
            #expect(reader.count == content.count)
            #expect(Array(try reader.read(at: 2_345_678, count: 1_000_000)) == Array(content[2_345_678 ..< 3_345_678]))
        }
    }

    /// pzstd's frames hold exactly 8 MiB: streamed into a 1 MiB buffer, a
    /// frame ends just as the buffer fills, and asking the decoder for more
    /// then starts a next frame (the reader's old measure took that for a
    /// file cut inside the frame).
    @Test("frames of an exact number of MiB measure right, streamed or whole, and the reader opens them")
    func wholeMebibytes() throws {
        let folder = Folder()
        let contents = [TestData.text(1 << 20, seed: 11), TestData.random(2 << 20, seed: 12)]
        folder.write("data.zst", Self.file(contents))
        let frames = try Self.frames(folder.path("data.zst"))
        for limit in [SeekableReader.cacheableFrameSize, 1000] {
            let sizes = try Self.measure(folder.path("data.zst"), frames, options: DecompressionOptions(),
                                         wholeFrameLimit: limit)
            #expect(sizes == [1 << 20, 2 << 20], "\(limit)")
            let reader = try SeekableReader(path: folder.path("data.zst"), options: DecompressionOptions(),
                                            wholeFrameLimit: limit)
            #expect(reader.count == 3 << 20)
            let across = Array(contents[0].suffix(5) + contents[1].prefix(5))
            #expect(Array(try reader.read(at: (1 << 20) - 5, count: 10)) == across)
        }
    }

    @Test("a corrupt frame fails naming it and its offset; of two, the first in order", arguments: [1, 4])
    func corrupt(threads: Int) throws {
        let folder = Folder()
        var bytes = Self.file()
        folder.write("good.zst", bytes)
        let frames = try Self.frames(folder.path("good.zst"))
        // Damage the middle of the text frames 2 and 4 of the list (the file's frames 5 and 9).
        for damaged in [frames[2], frames[4]] {
            bytes[damaged.offset + damaged.compressedSize / 2] ^= 0x5A
        }
        folder.write("bad.zst", bytes)
        for limit in [SeekableReader.cacheableFrameSize, 100_000] {
            do throws(WeirError) {
                let sizes = try Self.measure(folder.path("bad.zst"), frames,
                                             options: DecompressionOptions(threads: threads), wholeFrameLimit: limit)
                Issue.record("measured \(sizes)")
            } catch {
                #expect(error.kind == .corrupt || error.kind == .checksumMismatch, "\(error)")
                #expect(error.frame == 5 && error.offset == frames[2].offset, "\(error)")
                #expect(error.reason.contains("frame 5") && error.reason.contains("offset \(frames[2].offset)"),
                        "\(error)")
                #expect(error.path == folder.path("bad.zst") && error.operation == .decompress)
            }
        }
    }

    @Test("a file cut inside a frame fails as truncated, naming that frame")
    func truncated() throws {
        let folder = Folder()
        let bytes = Self.file()
        folder.write("whole.zst", bytes)
        let frames = try Self.frames(folder.path("whole.zst"))
        // Cut inside the frame of 1.2 MB of raw blocks: read whole, or a piece at a time.
        let cut = frames[3].offset + frames[3].compressedSize - 1000
        folder.write("cut.zst", Array(bytes.prefix(cut)))
        for limit in [SeekableReader.cacheableFrameSize, 100_000] {
            do throws(WeirError) {
                let sizes = try Self.measure(folder.path("cut.zst"), frames, options: DecompressionOptions(threads: 2),
                                             wholeFrameLimit: limit)
                Issue.record("measured \(sizes)")
            } catch {
                #expect(error.kind == .truncated, "\(error)")
                #expect(error.frame == 7 && error.offset == frames[3].offset, "\(error)")
                #expect(error.reason.contains("offset \(cut)") && error.reason.contains("frame 7"), "\(error)")
            }
        }
    }

    @Test("a frame whose window is above the memory limit is refused before it is decoded, whole or streamed")
    func windowLimit() throws {
        let folder = Folder()
        folder.write("data.zst", Self.file([TestData.text(1_000, seed: 1), TestData.text(3_000_000, seed: 2)]))
        let frames = try Self.frames(folder.path("data.zst"))
        for limit in [SeekableReader.cacheableFrameSize, 100_000] {
            do throws(WeirError) {
                let sizes = try Self.measure(folder.path("data.zst"), frames,
                                             options: DecompressionOptions(memoryLimit: 64 << 10),
                                             wholeFrameLimit: limit)
                Issue.record("measured \(sizes)")
            } catch {
                #expect(error.kind == .memoryLimit && error.frame == 3 && error.offset == frames[1].offset, "\(error)")
            }
        }
    }

    @Test("checksums are verified unless the options say not to")
    func checksums() throws {
        let folder = Folder()
        var bytes = Self.file([TestData.text(100_000, seed: 3)])
        // The last byte of the file is the last of the frame's stored checksum.
        bytes[bytes.count - 1] ^= 0xFF
        folder.write("data.zst", bytes)
        let frames = try Self.frames(folder.path("data.zst"))
        do throws(WeirError) {
            let sizes = try Self.measure(folder.path("data.zst"), frames, options: DecompressionOptions())
            Issue.record("measured \(sizes)")
        } catch {
            #expect(error.kind == .checksumMismatch && error.frame == 1, "\(error)")
        }
        let unchecked = try Self.measure(folder.path("data.zst"), frames,
                                         options: DecompressionOptions(verifyChecksum: false))
        #expect(unchecked == [100_000])
    }
}
