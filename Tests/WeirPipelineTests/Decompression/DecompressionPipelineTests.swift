import CZstd
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirPipelineTestSupport
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Decompression pipeline")
struct DecompressionPipelineTests {
    /// Compresses with weir's own pipeline, through pipes.
    static func weir(_ input: [UInt8], chunk: Int = 64 << 10, threads: Int = 2, checksum: Bool = true,
                     seekTable: Bool = true) throws -> [UInt8] {
        let outcome = PipeHarness.run(input: input) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "in", outputName: "out",
                                options: CompressionOptions(level: 1, threads: threads, chunkSize: chunk,
                                                            checksum: checksum, seekTable: seekTable)).result()
        }
        _ = try outcome.result.get()
        return outcome.output
    }

    /// Decodes through real pipes.
    static func decodePipe(_ compressed: [UInt8], options: DecompressionOptions = DecompressionOptions(threads: 3),
                           pieceSize: Int = 65536) -> PipeHarness.Outcome {
        PipeHarness.run(input: compressed, pieceSize: pieceSize) { inFD, outFD in
            DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                  inputName: "in.zst", outputName: "(stdout)",
                                  options: options).result()
        }
    }

    /// Decodes from a regular file (so a seek table is read) into a file.
    static func decodeFile(_ compressed: [UInt8], options: DecompressionOptions = DecompressionOptions(threads: 3),
                           test: Bool = false) -> PipeHarness.Outcome {
        let (output, result, _) = TestDecompression.file(compressed, options: options, test: test)
        return PipeHarness.Outcome(output: output, result: result)
    }

    static func failure(_ outcome: PipeHarness.Outcome) -> WeirError? {
        if case .failure(let error) = outcome.result { return error }
        return nil
    }

    @Test("round trips of weir output, any size, chunk size and thread count, from files and pipes")
    func roundTrips() throws {
        var generator = SeededGenerator(seed: 44)
        for round in 0 ..< 12 {
            let size = [0, 1, 4095, 70_000, 300_000, 1_500_000][round % 6] + Int(generator.next() % 5000)
            let chunk = [1024, 4096, 65536, 1 << 20][Int(generator.next() % 4)]
            let threads = 1 + Int(generator.next() % 4)
            let input =
                round % 2 == 0 ? TestData.text(size, seed: UInt64(round)) : TestData.random(size, seed: UInt64(round))
            let compressed = try Self.weir(input, chunk: chunk, threads: threads, seekTable: round % 3 != 0)
            let options = DecompressionOptions(threads: 1 + Int(generator.next() % 4))
            let fromFile = Self.decodeFile(compressed, options: options)
            let statistics = try fromFile.result.get()
            #expect(TestData.same(fromFile.output, input), "round \(round): file")
            #expect(statistics.bytesOut == input.count)
            #expect(statistics.bytesIn == compressed.count)
            #expect(statistics.frames == max(1, (size + chunk - 1) / chunk))
            let fromPipe = Self.decodePipe(compressed, options: options, pieceSize: 1 + Int(generator.next() % 70_000))
            #expect(TestData.same(fromPipe.output, input), "round \(round): pipe")
            let tested = Self.decodeFile(compressed, options: options, test: true)
            #expect(try tested.result.get().bytesOut == input.count)
        }
    }

    @Test("stock inputs: zstd single frame, zstd -T2, pzstd, concatenations, skippable frames")
    func standardInputs() throws {
        let input = TestData.text(3_000_000, seed: 5)
        let single = try DecompressionFormatTests.zstd(input, ["-3"])
        let threaded = try DecompressionFormatTests.zstd(input, ["-T2", "-1"])
        let pzstd = try DecompressionFormatTests.zstd(input, ["-p", "2"], tool: "/usr/bin/pzstd")
        let ours = try Self.weir(input, chunk: 256 << 10)
        let skippable: [UInt8] = [0x53, 0x2A, 0x4D, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]
        let cases: [([UInt8], [UInt8])] = [
            (single, input), (threaded, input), (pzstd, input), (ours, input),
            (ours + pzstd + single, input + input + input),
            (skippable + ours + skippable + threaded + skippable, input + input),
        ]
        for (index, (compressed, expected)) in cases.enumerated() {
            let file = Self.decodeFile(compressed)
            _ = try file.result.get()
            #expect(TestData.same(file.output, expected), "case \(index) from a file")
            let piped = Self.decodePipe(compressed, pieceSize: 3331)
            _ = try piped.result.get()
            #expect(TestData.same(piped.output, expected), "case \(index) from a pipe")
        }
    }

    @Test("errors name the frame and its offset; --no-check lets a bad checksum through")
    func errors() throws {
        let input = TestData.text(500_000, seed: 31)
        let good = try Self.weir(input, chunk: 100_000, seekTable: false)
        let frames = TestData.frames(good)
        let thirdStart = frames[0].size + frames[1].size + frames[2].size  // frame 3
        let thirdEnd = thirdStart + frames[3].size

        var checksum = good
        checksum[thirdEnd - 1] ^= 0x55
        for outcome in [Self.decodeFile(checksum), Self.decodePipe(checksum)] {
            let error = Self.failure(outcome)
            #expect(error?.kind == .checksumMismatch)
            #expect(error?.reason.contains("frame 3, at offset \(thirdStart)") == true, "\(String(describing: error))")
        }
        let unchecked = Self.decodeFile(checksum, options: DecompressionOptions(verifyChecksum: false))
        #expect(TestData.same(unchecked.output, input))

        var corrupt = good
        for index in stride(from: thirdStart + 40, to: thirdEnd - 40, by: 7) { corrupt[index] ^= 0xA5 }
        let corruptError = Self.failure(Self.decodeFile(corrupt))
        #expect(corruptError?.kind == .corrupt || corruptError?.kind == .checksumMismatch)
        #expect(corruptError?.reason.contains("frame 3") == true, "\(String(describing: corruptError))")

        let truncated = Self.failure(Self.decodePipe(Array(good.prefix(thirdEnd - 3))))
        #expect(truncated?.kind == .truncated)
        #expect(truncated?.reason.contains("frame 3") == true)

        #expect(Self.failure(Self.decodePipe(Array("not zstd at all".utf8)))?.kind == .notZstd)
        #expect(Self.failure(Self.decodePipe([]))?.kind == .notZstd)
        let trailing = Self.failure(Self.decodeFile(good + Array("garbage!".utf8)))
        #expect(trailing?.kind == .corrupt)
        #expect(trailing?.reason.contains("offset \(good.count)") == true)

        // A declared content size larger than the blocks can hold.
        var lying = try DecompressionFormatTests.zstd(TestData.text(1000, seed: 1), ["-3"])
        // Header: magic(4) descriptor(1) [window] FCS; zstd writes FCS 2 bytes (+256) for 1000 bytes.
        #expect(lying.count > 10)
        lying[5] = 0xFF
        lying[6] = 0x7F
        let lyingError = Self.failure(Self.decodeFile(lying))
        #expect(lyingError?.kind == .corrupt || lyingError?.kind == .checksumMismatch)
    }

    @Test("a frame whose blocks hold less than its header declares is corrupt, whole or streamed, in any pieces")
    func declaredSizeNotProduced() throws {
        // Found by the decoder fuzz target: single segment, 11 bytes declared,
        // an empty raw block, an empty last raw block, the checksum of no bytes.
        // libzstd's streaming decoder let it through when given in pieces.
        let short: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x0B, 0, 0, 0, 1, 0, 0, 0x99, 0xE9, 0xD8, 0x51]
        // 2 MiB declared with a 1 KiB window and the same empty blocks: past
        // the parallel frame limit of a 1 MiB budget, so it streams.
        let large: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x84, 0x00, 0x00, 0x00, 0x20, 0x00,
                              0, 0, 0, 1, 0, 0, 0x99, 0xE9, 0xD8, 0x51]
        let cases: [([UInt8], DecompressionOptions)] = [
            (short, DecompressionOptions(readSize: 13, threads: 2)),
            (short, DecompressionOptions(threads: 2)),
            (large, DecompressionOptions(memoryLimit: 1 << 20, threads: 2)),
            (large, DecompressionOptions(memoryLimit: 1 << 20, readSize: 7, threads: 2)),
        ]
        for (frame, options) in cases {
            for outcome in [
                Self.decodeFile(frame, options: options), Self.decodePipe(frame, options: options, pieceSize: 5),
            ] {
                let error = Self.failure(outcome)
                #expect(
                    error?.kind == .corrupt,
                    "\(frame.count) bytes, read size \(options.readSize): \(String(describing: error))")
                #expect(error?.frame == 0)
            }
        }
        // A compressed block may hold up to the frame's block maximum (here
        // the declared size): only decoding finds that it holds 10 bytes less.
        var longer = try DecompressionFormatTests.zstd(TestData.text(1000, seed: 1), ["-3"])
        longer[5] = 0xF2  // FCS: 1010 - 256, little-endian
        longer[6] = 0x02
        for outcome in [Self.decodeFile(longer), Self.decodePipe(longer, pieceSize: 5)] {
            let error = Self.failure(outcome)
            #expect(error?.kind == .corrupt && error?.frame == 0, "\(String(describing: error))")
        }
        // Raw blocks declare their decoded size: the scanner's bound already
        // says that these two hold nothing.
        #expect(
            Self.failure(Self.decodeFile(short, options: DecompressionOptions(readSize: 13, threads: 2)))?.reason
                == "corrupt data: frame 0 at offset 0 declares 11 bytes of content, more than its 2 blocks can hold (0)"
        )
    }

    @Test("seeded mutation: thousands of damaged inputs give the right output or a clean error")
    func mutations() throws {
        var generator = SeededGenerator(seed: 2024)
        let input = TestData.text(20_000, seed: 77)
        let sources: [[UInt8]] = [
            try Self.weir(input, chunk: 4096),
            try Self.weir(input, chunk: 4096, checksum: true, seekTable: false),
            try DecompressionFormatTests.zstd(input, ["-3"]),
            try DecompressionFormatTests.zstd(Array(input.prefix(7000)), ["-p", "2"], tool: "/usr/bin/pzstd")
                + (try DecompressionFormatTests.zstd(Array(input.dropFirst(7000)), ["-1"])),
        ]
        var errors = 0, correct = 0
        for round in 0 ..< 2000 {
            var bytes = sources[round % sources.count]
            let mutations = 1 + Int(generator.next() % 4)
            for _ in 0 ..< mutations {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 5 {
                case 0: bytes[position] ^= UInt8(1 << (generator.next() % 8))
                case 1: bytes[position] = UInt8(truncatingIfNeeded: generator.next())
                case 2: bytes.removeSubrange(position ..< min(bytes.count, position + 1 + Int(generator.next() % 64)))
                case 3:
                    bytes.insert(
                        contentsOf: (0..<1 + Int(generator.next() % 16)).map { _ in
                            UInt8(truncatingIfNeeded: generator.next())
                        },
                        at: position)
                default: bytes = Array(bytes.prefix(position))
                }
                if bytes.isEmpty { bytes = [0] }
            }
            let options = DecompressionOptions(threads: 1 + round % 3)
            let outcome = round % 4 == 3 ? Self.decodePipe(bytes, options: options, pieceSize: 997)
                                         : Self.decodeFile(bytes, options: options)
            switch outcome.result {
            case .success:
                // Inserting bytes into a skippable frame's payload, or cutting
                // right after a frame, can leave a valid stream: its output is
                // then a prefix of the input (frames dropped whole), never wrong bytes.
                #expect(outcome.output == Array(input.prefix(outcome.output.count)), "round \(round)")
                if outcome.output.count == input.count { correct += 1 }
            case .failure(let error):
                errors += 1
                #expect(!error.reason.isEmpty)
                #expect(error.kind != .library || error.reason.contains("frame"), "round \(round): \(error)")
            }
        }
        #expect(errors > 1000)
        #expect(correct > 0)
    }
}
