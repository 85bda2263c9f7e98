import WeirPipeline
import WeirSystem

/// What the public API needs of a pipeline: a blocking `run()` and a
/// `cancel()` that any other thread may call.
protocol BlockingPipeline: AnyObject, Sendable {
    /// Runs to the end of the input, a failure or ``cancel()``; blocks.
    func run() throws(WeirError) -> Statistics
    /// Stops the run from another thread; `run()` then throws `.cancelled`.
    func cancel()
}

extension CompressionPipeline: BlockingPipeline {}
extension DecompressionPipeline: BlockingPipeline {}
