import CFormats
import WeirSystem

/// lz4 frames, through liblz4's frame API; its context made with the
/// first frame and reset for each.
final class Lz4MemberDecoder: MemberDecoding {
    private let path: String
    private let operation: WeirError.Operation
    private var context: OpaquePointer?
    private var offset = 0

    var format: CompressedFormat { .lz4 }

    init(path: String, operation: WeirError.Operation) {
        self.path = path
        self.operation = operation
    }

    deinit { LZ4F_freeDecompressionContext(context) }

    func start(at offset: Int) throws(WeirError) {
        self.offset = offset
        guard context == nil else {
            LZ4F_resetDecompressionContext(context)
            return
        }
        var made: OpaquePointer?
        guard LZ4F_isError(LZ4F_createDecompressionContext(&made, UInt32(LZ4F_VERSION))) == 0 else {
            throw .outOfMemory(path: path, operation: operation, creating: "an lz4 decoder")
        }
        context = made
    }

    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int) throws(WeirError) -> Bool {
        var written = destination.count - filled
        var read = source.count - consumed
        let hint = LZ4F_decompress(context, destination.baseAddress.map { $0 + filled }, &written,
                                   source.baseAddress.map { $0 + consumed }, &read, nil)
        consumed += read
        filled += written
        guard LZ4F_isError(hint) == 0 else { throw corrupt(String(cString: LZ4F_getErrorName(hint))) }
        return hint == 0
    }

    func corrupt(_ detail: String) -> WeirError {
        .formatCorrupt(.lz4, path: path, operation: operation, detail, offset: offset)
    }
}
