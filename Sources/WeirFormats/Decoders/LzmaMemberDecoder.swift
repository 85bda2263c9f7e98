import CFormats
import WeirSystem

/// xz streams (one per member: a following one starts with its own magic
/// number) or .lzma members, through liblzma.
package final class LzmaMemberDecoder: MemberDecoding {
    let format: CompressedFormat
    private let path: String
    private let operation: WeirError.Operation
    /// The memory liblzma may take (``memoryLimit(_:)``).
    private let memoryLimit: UInt64
    private let stream: UnsafeMutablePointer<lzma_stream>
    private var offset = 0

    /// - Parameter format: `.xz` or `.lzma`.
    init(format: CompressedFormat, windowLimit: WindowLimit, path: String, operation: WeirError.Operation) {
        precondition(format == .xz || format == .lzma, "liblzma decodes xz and lzma")
        self.format = format
        self.path = path
        self.operation = operation
        memoryLimit = Self.memoryLimit(windowLimit)
        stream = .allocate(capacity: 1)
        stream.initialize(to: lzma_stream())
    }

    /// The memory liblzma may take, serially or on a worker: the window `-M`
    /// allows (128 MiB by default, as for zstd frames) and 16 MiB for the
    /// decoder's own state, so a header asking for a 3 GB dictionary is
    /// refused, not obeyed (xz -9's needs 65 MiB).
    package static func memoryLimit(_ windowLimit: WindowLimit) -> UInt64 {
        windowLimit.bytes + (16 << 20)
    }

    deinit {
        lzma_end(stream)
        stream.deallocate()
    }

    func start(at offset: Int) throws(WeirError) {
        self.offset = offset
        let code = format == .xz ? lzma_stream_decoder(stream, memoryLimit, 0)
                                 : lzma_alone_decoder(stream, memoryLimit)
        guard code == LZMA_OK else { throw .lzma(code, format, path: path, operation: operation, offset: offset) }
    }

    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int) throws(WeirError) -> Bool {
        let inputCount = source.count - consumed
        let outputCount = destination.count - filled
        stream.pointee.next_in = source.baseAddress.map { $0 + consumed }?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_in = inputCount
        stream.pointee.next_out = destination.baseAddress.map { $0 + filled }?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = outputCount
        let code = lzma_code(stream, LZMA_RUN)
        consumed += inputCount - stream.pointee.avail_in
        filled += outputCount - stream.pointee.avail_out
        switch code {
        case LZMA_STREAM_END: return true
        case LZMA_OK, LZMA_BUF_ERROR: return false
        default: throw .lzma(code, format, path: path, operation: operation, offset: offset)
        }
    }

    func corrupt(_ detail: String) -> WeirError {
        .formatCorrupt(format, path: path, operation: operation, detail, offset: offset)
    }
}
