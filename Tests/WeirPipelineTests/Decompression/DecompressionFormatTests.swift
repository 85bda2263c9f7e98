import CZstd
import Foundation
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// Stock zstd inputs and the errors that tell bad input apart, read from a
/// pipe in pieces of any size.
@Suite("Decompression pipeline: stock formats and errors")
struct DecompressionFormatTests {
    /// Compresses with the real zstd binary.
    static func zstd(_ input: [UInt8], _ arguments: [String], tool: String = "/usr/bin/zstd") throws -> [UInt8] {
        try TestData.realTool(tool, arguments, input: input)
    }

    func decode(_ compressed: [UInt8], verify: Bool = true, pieceSize: Int = 65536) -> PipeHarness.Outcome {
        PipeHarness.run(input: compressed, pieceSize: pieceSize) { inFD, outFD in
            DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                  inputName: "in.zst", outputName: "(stdout)",
                                  options: DecompressionOptions(verifyChecksum: verify)).result()
        }
    }

    @Test("decodes zstd's single frame, zstd -T2, pzstd and concatenations")
    func standardInputs() throws {
        let input = TestData.text(3_000_000, seed: 5)
        for compressed in [try Self.zstd(input, ["-3"]), try Self.zstd(input, ["-T2", "-1"]),
                           try Self.zstd(input, ["-p", "2"], tool: "/usr/bin/pzstd")] {
            let outcome = decode(compressed)
            let statistics = try outcome.result.get()
            #expect(TestData.same(outcome.output, input))
            #expect(statistics.bytesIn == compressed.count)
            #expect(statistics.bytesOut == input.count)
        }
        let a = TestData.text(100_000, seed: 1), b = TestData.random(50_000)
        let both = try Self.zstd(a, ["-3"]) + (try Self.zstd(b, ["--no-check"]))
        #expect(TestData.same(decode(both, pieceSize: 333).output, a + b))
    }

    @Test("skippable frames are skipped")
    func skippable() throws {
        let input = TestData.text(10_000)
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]
        let outcome = decode(skippable + (try Self.zstd(input, [])) + skippable)
        _ = try outcome.result.get()
        #expect(TestData.same(outcome.output, input))
    }

    @Test("not zstd, truncated, corrupt and checksum errors are told apart")
    func errors() throws {
        let input = TestData.text(200_000, seed: 3)
        let good = try Self.zstd(input, ["-3"])

        let notZstd = decode(Array("hello, this is plain text".utf8))
        #expect(failure(notZstd)?.kind == .notZstd)
        #expect(failure(notZstd)?.description == "in.zst: not in zstd format")

        let truncated = decode(Array(good.prefix(good.count - 10)))
        #expect(failure(truncated)?.kind == .truncated)

        var flipped = good
        flipped[flipped.count - 2] ^= 0xFF  // inside the checksum
        #expect(failure(decode(flipped))?.kind == .checksumMismatch)
        // --no-check lets a checksum mismatch through, as zstd does.
        #expect(TestData.same(decode(flipped, verify: false).output, input))

        var corrupt = good
        for i in stride(from: 20, to: min(corrupt.count - 8, 400), by: 3) { corrupt[i] ^= 0x5A }
        let corruptKind = failure(decode(corrupt))?.kind
        #expect(corruptKind == .corrupt || corruptKind == .checksumMismatch)

        let trailing = decode(good + Array("garbage!".utf8))
        #expect(failure(trailing)?.kind == .corrupt)
        #expect(failure(trailing)?.reason.contains("offset \(good.count)") == true)
        // The location is also in fields, for a program to read.
        #expect(failure(trailing)?.frame == 1 && failure(trailing)?.offset == good.count)
        #expect(failure(notZstd)?.frame == nil)

        #expect(failure(decode([]))?.kind == .notZstd)
    }

    @Test("a frame asking for a window above the memory limit is refused")
    func memoryLimit() throws {
        let input = TestData.text(3_000_000, seed: 8)
        let compressed = try Self.zstd(input, ["--long=24", "-1"])
        let outcome = PipeHarness.run(input: compressed) { inFD, outFD in
            DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                  inputName: "in.zst", outputName: "(stdout)",
                                  options: DecompressionOptions(memoryLimit: 1 << 20)).result()
        }
        #expect(failure(outcome)?.kind == .memoryLimit)
    }

    @Test("a single-segment frame whose content is above the limit is refused, though libzstd decodes it in one pass")
    func memoryLimitForOnePassFrames() throws {
        let input = TestData.text(300_000, seed: 9)
        let compressed = try Self.zstd(input, ["-19", "--single-thread"])  // window = content size
        for pieceSize in [65536, 1 << 20] {
            let outcome = PipeHarness.run(input: compressed, pieceSize: pieceSize) { inFD, outFD in
                DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                      inputName: "in.zst", outputName: "(stdout)",
                                      options: DecompressionOptions(memoryLimit: 64 << 10)).result()
            }
            #expect(failure(outcome)?.kind == .memoryLimit, "pieces of \(pieceSize)")
            #expect(failure(outcome)?.reason.contains("needs a window of 300000 bytes") == true)
            #expect(outcome.output.count == 0, "nothing is written before the refusal")
            let allowed = PipeHarness.run(input: compressed, pieceSize: pieceSize) { inFD, outFD in
                DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                      inputName: "in.zst", outputName: "(stdout)",
                                      options: DecompressionOptions(memoryLimit: 300_000)).result()
            }
            _ = try allowed.result.get()
            #expect(TestData.same(allowed.output, input))
        }
    }

    func failure(_ outcome: PipeHarness.Outcome) -> WeirError? {
        if case .failure(let error) = outcome.result { return error }
        return nil
    }
}
