import FuzzSupport
@testable import Weir
@testable import WeirPipeline
@testable import WeirSystem

// The decoder end to end on in-memory input, checked against libzstd's
// own decode of the same bytes (a differential check).
//
// Input: one option byte, then the compressed stream (an in-memory file,
// decoded into another). Option bits: 0–2 the read size (from 1 MiB down to
// 13 bytes, so frames and headers straddle reads), 3 `--no-check`, 4
// `--no-mmap` (read through DispatchIO), 5 one worker instead of two, 6 also
// a run with a 1 MiB memory limit, where frames over 512 KiB stream on the
// reading thread instead of going to the workers, 7 test only (no output).
//
// Properties, for ``DecompressionPipeline`` (either way):
// - weir decodes ⇒ libzstd decodes, to the same bytes (and the statistics
//   count them);
// - libzstd decodes ⇒ weir decodes too, except where weir is stricter by
//   design: a window above the memory limit (checked on every frame, which
//   libzstd skips for a frame decoded in one pass), and, when only testing,
//   a seek table that does not match its frames;
// - anything else is a clean ``WeirError`` (no trap, no hang, no leak).
// An input libzstd decodes to more than 8 MiB, or with a legacy frame, is
// not compared (and not run: it would only be slow).

let readSizes = [1 << 20, 1 << 20, 65536, 4096, 1000, 333, 64, 13]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let options = OptionBytes(fuzzInput(data, size), count: 1)
    let stream = options.payload
    var decoding = DecompressionOptions()
    decoding.readSize = readSizes[options.bits(0, 0, 3)]
    decoding.verifyChecksum = !options.flag(0, 3)
    decoding.mapInput = !options.flag(0, 4)
    decoding.threads = options.flag(0, 5) ? 1 : 2
    let streamingToo = options.flag(0, 6)
    let testOnly = options.flag(0, 7)

    let reference = ReferenceDecoder.decode(stream, ignoreChecksum: !decoding.verifyChecksum)
    if reference == .notComparable { return 0 }

    let input = MemoryFile(stream)
    let parallel = decode(input: input, testOnly: testOnly) { (input, output) throws(WeirError) in
        try DecompressionPipeline(input: .descriptor(input), output: output.map { .descriptor($0) }, inputName: "fuzz-in",
                                  outputName: "fuzz-out", options: decoding).run()
    }
    compare("parallel", parallel, reference, testOnly: testOnly)
    if case .success(let (statistics, _)) = parallel {
        require(statistics.bytesIn == stream.count, "parallel: \(statistics.bytesIn) bytes in of \(stream.count)")
    }
    if streamingToo {
        var small = decoding
        small.memoryLimit = 1 << 20
        let streaming = decode(input: MemoryFile(stream), testOnly: testOnly) { (input, output) throws(WeirError) in
            try DecompressionPipeline(input: .descriptor(input), output: output.map { .descriptor($0) }, inputName: "fuzz-in",
                                      outputName: "fuzz-out", options: small).run()
        }
        compare("streaming", streaming, reference, testOnly: testOnly)
    }
    return 0
}

/// Runs a pipeline from `input` into a fresh in-memory file (none when
/// testing); returns its statistics and output.
func decode(input: MemoryFile, testOnly: Bool,
            _ run: (Descriptor, Descriptor?) throws(WeirError) -> Statistics) -> Result<(Statistics, [UInt8]?), WeirError> {
    let output = testOnly ? nil : MemoryFile()
    do throws(WeirError) {
        let statistics = try run(Descriptor(input.fd, path: "fuzz-in"), output.map { Descriptor($0.fd, path: "fuzz-out") })
        return .success((statistics, output?.contents))
    } catch {
        return .failure(error)
    }
}

/// Checks one decoder's outcome against libzstd's.
func compare(_ name: String, _ outcome: Result<(Statistics, [UInt8]?), WeirError>,
             _ reference: ReferenceDecoder.Outcome, testOnly: Bool) {
    switch (outcome, reference) {
    case (.success(let (statistics, output)), .decoded(let expected)):
        if let output {
            require(output == expected, "\(name): \(output.count) bytes decoded differ from libzstd's \(expected.count)")
        }
        require(statistics.bytesOut == expected.count, "\(name): bytesOut \(statistics.bytesOut), libzstd \(expected.count)")
    case (.success(let (statistics, _)), _):
        require(false, "\(name): weir decodes (\(statistics.bytesOut) bytes) what libzstd refuses")
    case (.failure(let error), .decoded(let expected)):
        let stricter = error.kind == .memoryLimit
            || (testOnly && error.kind == .corrupt && error.operation == .test)  // the seek table check
        require(stricter, "\(name): libzstd decodes \(expected.count) bytes, weir fails: \(error)")
    case (.failure(let error), _):
        require(error.kind != .cancelled, "\(name): a run nobody cancelled ended as cancelled: \(error)")
    }
}
