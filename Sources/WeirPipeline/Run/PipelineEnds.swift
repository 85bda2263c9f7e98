import WeirFiles

/// What a pipeline runs between: its input and output, the names errors
/// give them, who is told of the bytes, and the partial output a resumed
/// run goes on writing. `Output` is ``PipelineOutput``, or optional for a
/// decompression that only tests its input (`-t`). The compression and
/// decompression pipelines hold their ends as one value, made once.
struct PipelineEnds<Output: Sendable>: Sendable {
    let input: PipelineInput
    let output: Output
    let inputName: String
    let outputName: String
    let observer: ProgressObserver?
    /// With a resumed run, the input's descriptor is at the end of what the
    /// kept output covers, and the output's at that output's end.
    let partial: PartialOutput?
}
