import WeirSystem

/// Where a pipeline writes to.
package enum PipelineOutput: Sendable {
    /// A descriptor, written through an ``OrderedWriter``; the caller's to
    /// close. With `writeBack`, a regular file that will be synced when
    /// complete: its writeback is started as it is written.
    case descriptor(Descriptor, writeBack: Bool = false)
    /// An async consumer (the streaming and in-memory API).
    case stream(StreamSink)
}
