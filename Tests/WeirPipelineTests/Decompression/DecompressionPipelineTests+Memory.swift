import CZstd
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// The decompression pipeline's memory: frames above the budget stream,
/// weir's own frames decode whole, pieces land in their frame's buffer, and
/// the limit refuses a frame above it on every path.
extension DecompressionPipelineTests {
    /// Decodes `compressed` from a file to /dev/null; returns the pipeline
    /// (for its peaks) and what it did.
    static func decodeToNull(_ compressed: [UInt8], options: DecompressionOptions,
                             test: Bool = false) throws -> (DecompressionPipeline, Statistics) {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("x.zst").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(compressed))
        let inFD = open(path, O_RDONLY)
        let outFD = open("/dev/null", O_WRONLY)
        defer {
            close(inFD)
            close(outFD)
        }
        let pipeline = DecompressionPipeline(input: FileDescriptor(rawValue: inFD),
                                             output: test ? nil : FileDescriptor(rawValue: outFD),
                                             inputName: "x",
                                             outputName: "null", options: options)
        return (pipeline, try pipeline.run())
    }

    @Test("frames above the memory budget stream, and the bytes in flight stay within it")
    func boundedMemory() throws {
        let input = TestData.text(6_000_000, seed: 21)
        let big = try Self.weir(input, chunk: 2 << 20)  // 2 MiB frames
        // a 2 MiB budget: buffers above 1 MiB stream
        let options = DecompressionOptions(memoryLimit: 4 << 20, threads: 2)
        #expect(options.inFlightBudget == 2 << 20)
        #expect(options.parallelFrameLimit == 1 << 20)
        let pipe = Self.decodePipe(big, options: options, pieceSize: 10_000)
        #expect(TestData.same(pipe.output, input))
        let single = try DecompressionFormatTests.zstd(input, ["-T2", "-1"])
        for compressed in [big, single] {
            let (pipeline, statistics) = try Self.decodeToNull(compressed, options: options)
            #expect(statistics.bytesOut == input.count)
            #expect(pipeline.peakBytesInFlight <= 2 << 20)
            #expect(pipeline.peakBufferBytes <= 2 << 20)
        }
        // Small frames with the default budget: many in flight, within it.
        let small = try Self.weir(TestData.text(20_000_000, seed: 3), chunk: 1 << 20, threads: 2)
        let outcome = Self.decodePipe(small, options: DecompressionOptions(threads: 4))
        #expect(outcome.output.count == 20_000_000)
    }

    @Test(
        """
        weir's 8 MiB frames decode whole at the default budget and from -M 24MiB; buffers, idle ones included, stay \
        within the budget
        """
    )
    func defaultFramesWhole() throws {
        let block = TestData.text(1 << 20, seed: 8)
        let input = (0 ..< 24).flatMap { _ in block } + block.prefix(12345)
        let compressed = try Self.weir(input, chunk: 8 << 20, threads: 2)
        #expect(DecompressionOptions(threads: 1).parallelFrameLimit >= 8 << 20)
        for options in [DecompressionOptions(threads: 2), DecompressionOptions(threads: 1),
                        DecompressionOptions(memoryLimit: 32 << 20, threads: 2),
                        DecompressionOptions(memoryLimit: 24 << 20, threads: 2)] {
            let budget = options.inFlightBudget
            for test in [false, true] {
                let (pipeline, statistics) = try Self.decodeToNull(compressed, options: options, test: test)
                #expect(statistics.bytesOut == input.count)
                #expect(statistics.frames == 4)
                #expect(pipeline.framesStreamed == 0, "budget \(budget)")
                #expect(pipeline.peakBytesInFlight <= budget, "budget \(budget)")
                #expect(pipeline.peakBufferBytes <= budget, "budget \(budget)")
            }
        }
        // Below a 16 MiB budget they stream, within it too.
        let small = DecompressionOptions(memoryLimit: 20 << 20, threads: 2)
        #expect(small.inFlightBudget == 12 << 20)
        let (pipeline, statistics) = try Self.decodeToNull(compressed, options: small)
        #expect(statistics.bytesOut == input.count)
        #expect(pipeline.framesStreamed == 3)
        #expect(pipeline.peakBytesInFlight <= 12 << 20)
        #expect(pipeline.peakBufferBytes <= 12 << 20)
        let piped = Self.decodePipe(compressed, options: small, pieceSize: 100_000)
        #expect(TestData.same(piped.output, input))
    }

    @Test("a frame spanning many pieces decodes straight into its buffer, wherever the pieces are cut")
    func framesInPieces() throws {
        var generator = SeededGenerator(seed: 15)
        let input = TestData.text(700_000, seed: 15)
        let frame = TestData.compress(input, checksum: true, windowLog: 17, streamed: false)
        let context = try DecompressionContext(windowLogMax: 27, verifyChecksum: true, stableOutput: true, path: "x")
        var output = [UInt8](repeating: 0, count: input.count)
        for round in 0 ..< 40 {
            var cuts = Set<Int>()
            for _ in 0 ..< 1 + round % 12 { cuts.insert(1 + Int(generator.next() % UInt64(frame.count - 1))) }
            let data = Self.pieces(frame, cutAt: cuts.sorted())
            let produced = try output.withUnsafeMutableBytes { destination in
                try Result { () throws(WeirError) in try context.decompressFrame(pieces: data, into: destination) }
                    .get()
            }
            #expect(produced == input.count, "cuts \(cuts.sorted())")
            #expect(output == input, "cuts \(cuts.sorted())")
        }
        // Damage is reported, and the context decodes the next frame.
        var damaged = frame
        damaged[damaged.count - 2] ^= 0x10
        let failures: [(DispatchData, [WeirError.Kind])] = [
            (Self.pieces(damaged, cutAt: [frame.count / 3, frame.count / 2]), [.checksumMismatch]),
            (Self.pieces(Array(frame.dropLast(9)), cutAt: [frame.count / 2]), [.corrupt]),
        ]
        for (data, kinds) in failures {
            let result = output.withUnsafeMutableBytes { destination in
                Result { () throws(WeirError) in try context.decompressFrame(pieces: data, into: destination) }
            }
            if case .failure(let error) = result {
                #expect(kinds.contains(error.kind), "\(error)")
            } else {
                Issue.record("decoded a damaged frame")
            }
        }
        let again = output.withUnsafeMutableBytes { destination in
            Result { () throws(WeirError) in
                try context.decompressFrame(pieces: Self.pieces(frame, cutAt: [7]), into: destination)
            }
        }
        #expect(try again.get() == input.count)
    }

    /// `bytes` as DispatchData of several regions, cut at `cuts` (ascending).
    static func pieces(_ bytes: [UInt8], cutAt cuts: [Int]) -> DispatchData {
        var data = DispatchData.empty
        var start = 0
        for end in cuts + [bytes.count] where end > start {
            bytes[start ..< end].withUnsafeBytes { data.append(DispatchData(bytes: $0)) }
            start = end
        }
        return data
    }

    @Test("the memory limit refuses a frame above it on every path: whole on a worker, streamed, file and pipe")
    func memoryLimitOnEveryPath() throws {
        // Single-segment frames (window = content) of 200 and 600 KB; under a
        // 1 MiB budget both stream (a buffer is at least 1 MiB).
        for size in [200_000, 600_000] {
            let input = TestData.text(size, seed: UInt64(size))
            let compressed = try DecompressionFormatTests.zstd(input, ["-19", "--single-thread"])
            let refused = DecompressionOptions(memoryLimit: 64 << 10, threads: 2)
            for outcome in [Self.decodeFile(compressed, options: refused),
                            Self.decodeFile(compressed, options: refused, test: true),
                            Self.decodePipe(compressed, options: refused, pieceSize: 4096),
                            Self.decodePipe(compressed, options: refused, pieceSize: 1 << 20)] {
                let error = Self.failure(outcome)
                #expect(error?.kind == .memoryLimit, "\(size)")
                #expect(error?.reason.contains("frame 0 at offset 0 needs a window of \(size) bytes") == true,
                        "\(String(describing: error))")
            }
            let allowed = DecompressionOptions(memoryLimit: size, threads: 2)
            for outcome in [
                Self.decodeFile(compressed, options: allowed), Self.decodePipe(compressed, options: allowed),
            ] {
                _ = try outcome.result.get()
                #expect(TestData.same(outcome.output, input), "\(size)")
            }
        }
    }
}
