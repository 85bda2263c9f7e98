import Weir

/// What a job does, without its options: how statistics name it
/// (`"compress"`, `"decompress"`, `"test"` in JSON) and which way the ratio reads.
package enum OperationKind: String, Sendable, Codable, CaseIterable {
    case compress
    case decompress
    case test

    /// The kind of a job's operation.
    package init(_ operation: FileJob.Operation) {
        switch operation {
        case .compress: self = .compress
        case .decompress: self = .decompress
        case .test: self = .test
        }
    }
}
