import Foundation
import Glibc
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

/// Runs a pipeline between real pipes: a feeder thread writes the input into
/// one pipe (in pieces of `pieceSize`, to exercise partial reads), a drainer
/// thread reads the other, and the pipeline runs on the calling thread.
enum PipeHarness {
    struct Outcome {
        var output: [UInt8]
        var result: Result<Statistics, WeirError>
    }

    static func run(input: [UInt8], pieceSize: Int = 1 << 16,
                    _ body: (_ inputFD: Int32, _ outputFD: Int32) -> Result<Statistics, WeirError>) -> Outcome {
        signal(SIGPIPE, SIG_IGN)  // the feeder may outlive a pipeline that failed early
        guard let inPipe = TestPipe.make(), let outPipe = TestPipe.make() else { preconditionFailure("pipe") }
        let (inRead, inWrite, outRead, outWrite) = (inPipe.read, inPipe.write, outPipe.read, outPipe.write)
        let feeder = Thread {
            var offset = 0
            input.withUnsafeBytes { bytes in
                while offset < bytes.count {
                    let n = write(inWrite, bytes.baseAddress! + offset, min(pieceSize, bytes.count - offset))
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(inWrite)
        }
        let collected = Collected()
        let done = DispatchSemaphore(value: 0)
        let drainer = Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(outRead, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                collected.bytes += buffer.prefix(n)
            }
            close(outRead)
            done.signal()
        }
        feeder.start()
        drainer.start()
        let result = body(inRead, outWrite)
        close(inRead)
        close(outWrite)
        done.wait()
        return Outcome(output: collected.bytes, result: result)
    }

    private final class Collected: @unchecked Sendable {
        var bytes: [UInt8] = []
    }
}

extension CompressionPipeline {
    /// `run()` as a `Result`, for the harness.
    func result() -> Result<Statistics, WeirError> {
        do throws(WeirError) { return .success(try run()) } catch { return .failure(error) }
    }
}

extension DecompressionPipeline {
    /// `run()` as a `Result`, for the harness.
    func result() -> Result<Statistics, WeirError> {
        do throws(WeirError) { return .success(try run()) } catch { return .failure(error) }
    }
}
