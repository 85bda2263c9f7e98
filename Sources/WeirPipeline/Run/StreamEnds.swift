import Dispatch
import WeirSystem

/// The ends of a run that reads one input on one thread: the input and
/// output descriptors (the caller's to close; no output for `-t`), the
/// names errors give them, and who is told of the bytes. What
/// ``PassThroughCopy`` is made of.
struct StreamEnds: Sendable {
    let input: Descriptor
    let output: PipelineOutput?
    let inputName: String
    let outputName: String
    let observer: ProgressObserver?

    /// What the input is: a regular file of a size, a pipe, …
    var kind: InputKind { InputKind.of(input) }

    /// The run's reader and writer on these ends; after a failure, a slot
    /// wakes the run's thread if it waits for one.
    func run(control: RunControl, kind: InputKind, readSize: Int, mapFiles: Bool, sizesReadBuffers: Bool,
             sparse: Bool) -> PipelineRun {
        PipelineRun(control: control, input: .descriptor(input), kind: kind, inputName: inputName,
                    readSize: readSize, mapFiles: mapFiles, sizesReadBuffers: sizesReadBuffers, output: output,
                    outputName: outputName, sparse: sparse, observer: observer,
                    wake: { control.slots.signal() })
    }
}
