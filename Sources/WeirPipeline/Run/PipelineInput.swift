import WeirSystem

/// Where a pipeline reads from.
package enum PipelineInput: Sendable {
    /// A descriptor (a file, a pipe, stdin), the caller's to close.
    case descriptor(Descriptor)
    /// Bytes handed over in memory (the streaming and in-memory API).
    case feed(ChunkFeed)

    /// What the input is: a regular file's size, or a stream.
    var kind: InputKind {
        switch self {
        case .descriptor(let fd): InputKind.of(fd)
        case .feed: .stream
        }
    }

    /// The descriptor, if the input is one.
    var descriptor: Descriptor? {
        if case .descriptor(let fd) = self { return fd }
        return nil
    }
}
