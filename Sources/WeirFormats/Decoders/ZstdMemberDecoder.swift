import WeirSystem

/// zstd frames, through a ``DecompressionContext``: the context of a
/// pipeline's frame (its errors then located by the pipeline), or one made
/// for a stream of members of every format (``MixedStreamDecoder``), whose
/// errors say where the frame starts.
final class ZstdMemberDecoder: MemberDecoding {
    let context: DecompressionContext
    private let path: String
    private let operation: WeirError.Operation
    /// Where the member starts, once started by ``start(at:)``: errors then
    /// name it.
    private var offset: Int?

    var format: CompressedFormat { .zstd }
    var consumed: (@Sendable (Int) -> Void)? { context.consumed }

    init(context: DecompressionContext, path: String, operation: WeirError.Operation = .decompress) {
        self.context = context
        self.path = path
        self.operation = operation
    }

    /// A decoder with its own context, made as `options` ask (`-M`, `--no-check`, `-D`, `--patch-from`).
    convenience init(options: DecodingOptions, path: String, operation: WeirError.Operation) throws(WeirError) {
        let dictionary = try options.dictionary.map { dictionary throws(WeirError) in
            try DecompressionDictionary(dictionary)
        }
        let context = try DecompressionContext(windowLogMax: options.windowLimit.logMax,
                                               verifyChecksum: options.verifyChecksum, dictionary: dictionary,
                                               prefix: options.patchReference, path: path)
        self.init(context: context, path: path, operation: operation)
    }

    func start(at offset: Int) {
        self.offset = offset
        context.reset()
    }

    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int) throws(WeirError) -> Bool {
        do throws(WeirError) {
            return try context.decompressStream(source, consumed: &consumed, into: destination, filled: &filled) == 0
        } catch {
            throw located(error)
        }
    }

    func corrupt(_ detail: String) -> WeirError {
        located(.corrupt(path: path, operation: operation, detail))
    }

    /// `error`, naming the frame's start when it is known.
    private func located(_ error: WeirError) -> WeirError {
        guard let offset else { return error }
        return error.located(frame: 0, offset: offset, .trailing)
    }
}
