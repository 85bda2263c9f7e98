/// Where a pipeline writes to.
enum PipelineOutput: Sendable {
    /// A descriptor, written through an ``OrderedWriter``; the caller's to close.
    case descriptor(Int32)
    /// An async consumer (the streaming and in-memory API).
    case stream(StreamSink)
}
