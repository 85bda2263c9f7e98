import CZstd
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirTestSupport

/// Read and write failures, hostile compressed input, and many random round
/// trips: every one ends in correct output or a clean error, never a crash,
/// a hang or a wrong byte.
@Suite("Faults and stress")
struct FaultTests {
    @Test("a read error (a directory's descriptor gives EISDIR) is a clean error naming the file")
    func readError() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = open(folder.path, O_RDONLY)
        let output = open("/dev/null", O_WRONLY)
        defer { close(input); close(output) }
        let result = CompressionPipeline(
            input: FileDescriptor(rawValue: input), output: FileDescriptor(rawValue: output),
            inputName: "dir", outputName: "out"
        ).result()
        guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
        #expect(error.kind == .system(errno: EISDIR))
        #expect(error.description == "dir: read failed: Is a directory")
    }

    @Test("a full disk (/dev/full) is a clean ENOSPC error, for both directions")
    func diskFull() throws {
        let full = open("/dev/full", O_WRONLY)
        defer { close(full) }
        let compressed = PipeHarness.run(input: TestData.text(3_000_000)) { inFD, _ in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: full),
                                inputName: "in", outputName: "out.zst",
                                options: CompressionOptions(chunkSize: 65536)).result()
        }
        guard case .failure(let error) = compressed.result else { Issue.record("expected a failure"); return }
        #expect(error.description == "out.zst: write failed: No space left on device")

        let frames = try DecompressionFormatTests.zstd(TestData.text(3_000_000), ["-1"])
        let decompressed = PipeHarness.run(input: frames) { inFD, _ in
            DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: full),
                                  inputName: "in.zst", outputName: "out").result()
        }
        guard case .failure(let decodeError) = decompressed.result else { Issue.record("expected a failure"); return }
        #expect(decodeError.kind == .system(errno: ENOSPC))
    }

    @Test("hundreds of random round trips: sizes, chunk sizes, threads, in-flight bounds, levels, pieces")
    func randomRoundTrips() throws {
        let seed = TestRotation.seed(2026)
        var random = SeededGenerator(seed: seed)
        for round in 0..<TestRotation.rounds(240) {
            let size = Int(random.next() % 400_000) * (round % 7 == 0 ? 0 : 1)
            let chunk = 1024 << Int(random.next() % 8)           // 1 KiB … 128 KiB
            let threads = 1 + Int(random.next() % 4)
            let inFlight = 1 + Int(random.next() % 6)
            let level = Int(random.next() % 12) - 3
            let piece = 1 + Int(random.next() % 100_000)          // how the producer writes
            let input =
                round % 3 == 0 ? TestData.random(size, seed: UInt64(round)) : TestData.text(size, seed: UInt64(round))
            let options = CompressionOptions(level: level == 0 ? 1 : level, threads: threads, chunkSize: chunk,
                                             checksum: round % 2 == 0, chunksInFlight: inFlight)
            let compressed = PipeHarness.run(input: input, pieceSize: piece) { inFD, outFD in
                CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                    inputName: "in", outputName: "out", options: options).result()
            }
            let context =
                "seed \(seed) round \(round): size \(size) chunk \(chunk) threads \(threads) in-flight \(inFlight) "
                    + "level \(level)"
            #expect((try? compressed.result.get()) != nil, "\(context)")
            // Decoded by libzstd directly, and by weir's own decoder read in odd pieces.
            #expect(TestData.same(TestData.zstdDecode(compressed.output), input), "\(context)")
            let decoded = PipeHarness.run(input: compressed.output, pieceSize: 1 + Int(random.next() % 5000)) {
                inFD, outFD in
                DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                      inputName: "in.zst", outputName: "out",
                                      options: DecompressionOptions(readSize: 1024 << Int(random.next() % 10))).result()
            }
            #expect(TestData.same(decoded.output, input), "\(context)")
        }
        // And data compressed by the zstd binary, decoded by weir.
        for round in 0..<12 {
            let input = TestData.text(Int(random.next() % 2_000_000), seed: UInt64(round))
            let compressed = try DecompressionFormatTests.zstd(
                input, round % 2 == 0 ? ["-T2", "-3"] : ["-1", "--no-check"])
            let decoded = PipeHarness.run(input: compressed, pieceSize: 4096) { inFD, outFD in
                DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                      inputName: "in.zst", outputName: "out").result()
            }
            #expect(TestData.same(decoded.output, input), "zstd round \(round)")
        }
    }

    @Test("thousands of mutated streams: the right bytes or a clean error, never a crash or a hang")
    func mutations() throws {
        let original = TestData.text(40_000, seed: 77)
        let clean = PipeHarness.run(input: original) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "in", outputName: "out",
                                options: CompressionOptions(chunkSize: 8192)).result()
        }.output
        let seed = TestRotation.seed(6)
        var random = SeededGenerator(seed: seed)
        var failures = 0
        let rounds = TestRotation.rounds(2000)
        for round in 0..<rounds {
            var mutated = clean
            let kind = round % 4
            switch kind {
            case 0, 1:  // bit flips
                for _ in 0...Int(random.next() % 3) {
                    let at = Int(random.next() % UInt64(mutated.count))
                    mutated[at] ^= UInt8(1 << (random.next() % 8))
                }
            case 2:  // truncation anywhere, including inside headers and checksums
                mutated = Array(mutated.prefix(Int(random.next() % UInt64(mutated.count))))
            default:  // a random byte run overwritten (headers with absurd sizes, bad magic…)
                let at = Int(random.next() % UInt64(mutated.count))
                for i in at..<min(mutated.count, at + 1 + Int(random.next() % 16)) {
                    mutated[i] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            let decoded = PipeHarness.run(input: mutated, pieceSize: 4096) { inFD, outFD in
                DecompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                      inputName: "m.zst", outputName: "out",
                                      options: DecompressionOptions(memoryLimit: 8 << 20)).result()
            }
            switch decoded.result {
            case .success:
                // Every frame carries a checksum: what decodes is right, or a
                // prefix of it when the stream was cut at a frame boundary.
                if kind == 2 {
                    #expect(original.starts(with: decoded.output), "seed \(seed) round \(round)")
                } else {
                    #expect(TestData.same(decoded.output, original), "seed \(seed) round \(round)")
                }
            case .failure(let error):
                failures += 1
                #expect(error.path == "m.zst")
                #expect(!error.reason.isEmpty)
            }
        }
        // Most mutations break a frame: the checks are not idle.
        #expect(failures > rounds / 2, "seed \(seed): \(failures) of \(rounds) failed")
    }
}
