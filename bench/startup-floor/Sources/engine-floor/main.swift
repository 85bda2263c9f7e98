import Dispatch
import FloorAllocator
import Glibc
import SystemPackage
import Weir

// The engine alone: standard input (or argv[1]) compressed to standard output
// at level 3 by two workers, as `weir -T2 -c` would, through the public API.
func fail(_ message: String) -> Never {
    var line = "engine-floor: " + message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(1)
}

_ = floor_allocator_linked()
var options = CompressionOptions()
options.threads = 2
let input: FileDescriptor
do {
    input = CommandLine.arguments.count > 1
        ? try FileDescriptor.open(CommandLine.arguments[1], .readOnly) : .standardInput
} catch {
    fail("cannot open \(CommandLine.arguments[1])")
}
let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var failure: WeirError?
Compressor(options: options).compress(from: input, to: .standardOutput) { result in
    if case .failure(let error) = result { failure = error }
    done.signal()
}
done.wait()
if let failure { fail("\(failure)") }
exit(0)
