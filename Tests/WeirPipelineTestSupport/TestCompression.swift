import Glibc
import SystemPackage
import WeirPipeline
import WeirSystem

/// A file compressed as `Compressor(options:).compress(file:)` compresses
/// it, for the tests of the targets below `Weir`, which may not use it: the
/// same pipeline on the file's descriptor, its options planned as the
/// `Compressor` plans them, into `path` + `.zst`. Runs on the calling thread.
enum TestCompression {
    @discardableResult
    static func compress(file path: String, options: CompressionOptions) throws(WeirError) -> Statistics {
        let input = try Descriptor.openForReading(path)
        defer { input.close() }
        let outputPath = path + ".zst"
        let output = Glibc.open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw WeirError.system(errno, path: outputPath, operation: .open) }
        defer { Glibc.close(output) }
        let pipeline = CompressionPipeline(
            input: FileDescriptor(rawValue: input.fd), output: FileDescriptor(rawValue: output), inputName: path,
            outputName: outputPath, options: WorkerPlan.applied(to: options).options)
        return try pipeline.run()
    }
}
