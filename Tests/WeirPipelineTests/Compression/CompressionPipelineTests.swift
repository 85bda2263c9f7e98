import CZstd
import Foundation
import SystemPackage
import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirTestSupport

@Suite("Compression pipeline")
struct CompressionPipelineTests {
    @Test("round trip through real pipes, any size, chunk size and thread count",
          arguments: [(0, 4096, 1), (1, 4096, 2), (4095, 4096, 2), (4096, 4096, 2), (4097, 4096, 3),
                      (100_000, 4096, 2), (1_000_000, 65536, 4), (3_000_000, 1 << 20, 2)])
    func roundTrip(size: Int, chunk: Int, threads: Int) throws {
        let input = TestData.text(size, seed: UInt64(size))
        let outcome = PipeHarness.run(input: input, pieceSize: 7919) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "(stdin)", outputName: "(stdout)",
                                options: CompressionOptions(level: 3, threads: threads, chunkSize: chunk)).result()
        }
        let statistics = try outcome.result.get()
        #expect(statistics.bytesIn == size)
        #expect(statistics.bytesOut == outcome.output.count)
        #expect(TestData.same(TestData.zstdDecode(outcome.output), input))
        // One independent frame per chunk (one empty frame for empty input),
        // each declaring its content size.
        // Several frames end with the seek table; one has nothing to seek.
        let expected = max(1, (size + chunk - 1) / chunk)
        let all = TestData.frames(outcome.output)
        #expect(all.count == (expected == 1 ? 1 : expected + 1))
        let frames = expected == 1 ? all[...] : all.dropLast()
        // The seekable format's footer ends the output exactly when a table is there.
        #expect(Array(outcome.output.suffix(4)) == [0xB1, 0xEA, 0x92, 0x8F] || expected == 1)
        #expect(Array(outcome.output.suffix(4)) != [0xB1, 0xEA, 0x92, 0x8F] || expected > 1)
        #expect(statistics.frames == expected)
        // Each frame is one segment (its content fits the level's window):
        // its window is its content, the largest the first frame's.
        #expect(statistics.windowLog == WindowLimit.windowLog(UInt64(min(size, chunk))))
        for (index, frame) in frames.enumerated() {
            let declared = index == expected - 1 ? size - chunk * (expected - 1) : chunk
            #expect(frame.contentSize == UInt64(declared))
        }
    }

    @Test("frames carry a checksum unless it is turned off")
    func checksumFlag() throws {
        let input = TestData.text(50_000)
        for checksum in [true, false] {
            let outcome = PipeHarness.run(input: input) { inFD, outFD in
                CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                    inputName: "in", outputName: "out",
                                    options: CompressionOptions(checksum: checksum)).result()
            }
            _ = try outcome.result.get()
            // Frame header descriptor: bit 2 is Content_Checksum_flag.
            let descriptor = outcome.output[4]
            #expect((descriptor & 0x04 != 0) == checksum)
        }
    }

    @Test("levels change the output and all decode", arguments: [-5, 1, 3, 19])
    func levels(level: Int) throws {
        let input = TestData.text(300_000, seed: 9)
        let outcome = PipeHarness.run(input: input) { inFD, outFD in
            CompressionPipeline(input: FileDescriptor(rawValue: inFD), output: FileDescriptor(rawValue: outFD),
                                inputName: "in", outputName: "out",
                                options: CompressionOptions(level: level, threads: 2, chunkSize: 100_000)).result()
        }
        _ = try outcome.result.get()
        #expect(TestData.same(TestData.zstdDecode(outcome.output), input))
    }

    @Test("a closed downstream pipe is a clean EPIPE error, not a crash")
    func brokenPipe() throws {
        signal(SIGPIPE, SIG_IGN)
        let inPipe = try #require(TestPipe.make())
        let outPipe = try #require(TestPipe.make())
        close(outPipe.read)  // nobody will read
        let inWrite = inPipe.write
        let input = TestData.random(2_000_000)
        let feeder = Thread {
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = write(inWrite, bytes.baseAddress! + offset, bytes.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(inWrite)
        }
        feeder.start()
        let result = CompressionPipeline(input: FileDescriptor(rawValue: inPipe.read),
                                         output: FileDescriptor(rawValue: outPipe.write),
                                         inputName: "in", outputName: "(stdout)",
                                         options: CompressionOptions(chunkSize: 65536)).result()
        close(inPipe.read)
        close(outPipe.write)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.isBrokenPipe)
        #expect(error.description.hasPrefix("(stdout): write failed"))
    }

    @Test("cancel stops a run blocked on a slow input")
    func cancel() throws {
        let inPipe = try #require(TestPipe.make())
        let devNull = open("/dev/null", O_WRONLY)
        let pipeline = CompressionPipeline(input: FileDescriptor(rawValue: inPipe.read),
                                           output: FileDescriptor(rawValue: devNull),
                                           inputName: "in", outputName: "out")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { pipeline.cancel() }
        let result = pipeline.result()
        inPipe.close(); close(devNull)
        guard case .failure(let error) = result else {
            Issue.record("expected cancellation")
            return
        }
        #expect(error.kind == .cancelled)
    }
}
