import Foundation
import Glibc
import SystemPackage
import WeirPipeline
import WeirSystem

/// Bytes decoded by the decompression pipeline from a regular file (so a
/// seek table is read) into a file: `DecompressionPipelineTests.decodeFile`,
/// and the tests of the targets above the pipeline's that read the same
/// inputs another way (`ZstdFrameVectorTests`: the block decoder).
enum TestDecompression {
    /// The output written (none with `test`: as `-t`), the run's statistics
    /// or its error, and the pipeline (for its peaks).
    static func file(_ compressed: [UInt8], options: DecompressionOptions, test: Bool = false)
        -> (output: [UInt8], result: Result<Statistics, WeirError>, pipeline: DecompressionPipeline) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weir-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("in.zst").path
        let target = folder.appendingPathComponent("out").path
        _ = FileManager.default.createFile(atPath: source, contents: Data(compressed))
        let inFD = open(source, O_RDONLY)
        let outFD = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let pipeline = DecompressionPipeline(input: FileDescriptor(rawValue: inFD),
                                             output: test ? nil : FileDescriptor(rawValue: outFD), inputName: "in.zst",
                                             outputName: "out", options: options)
        let result = Result { () throws(WeirError) in try pipeline.run() }
        close(inFD)
        close(outFD)
        return (FileManager.default.contents(atPath: target).map { Array($0) } ?? [], result, pipeline)
    }
}
