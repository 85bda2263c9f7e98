import CFormats
import Dispatch
import Glibc

/// Decodes the leading run of weir's own gzip members of a whole mapped
/// file in parallel: each member's header gives its size (``GzipMember``)
/// and its trailer its content's size, so members are found without
/// inflating them and each is inflated whole by libdeflate on a worker,
/// into a buffer of exactly its size. What follows the run (another
/// tool's member, another format) is left to ``MixedStreamDecoder``.
///
/// Bound and threads: ``MemberRun``'s.
struct GzipMemberScan {
    /// A worker's libdeflate decompressor.
    final class Inflater {
        let decompressor: OpaquePointer
        init(path: String) throws(WeirError) {
            guard let made = libdeflate_alloc_decompressor() else {
                throw .outOfMemory(path: path, operation: .decompress, creating: "a gzip decoder")
            }
            decompressor = made
        }
        deinit { libdeflate_free_decompressor(decompressor) }
    }

    let run: PipelineRun
    let path: String
    let operation: WeirError.Operation
    let threads: Int

    /// Queues every member of the run of weir members that starts `data`
    /// (one region, the whole file); returns the bytes they take and the
    /// next output index. Zero bytes when `data` does not start with one.
    func decode(_ data: DispatchData, region: UnsafeRawBufferPointer, firstIndex: Int) -> (bytes: Int, next: Int) {
        guard threads > 1, GzipMember.recordedSize(region) != nil else { return (0, firstIndex) }
        // The run's members first (their headers and trailers only).
        var members: [MemberRun.Member] = []
        var offset = 0
        while let size = GzipMember.recordedSize(UnsafeRawBufferPointer(rebasing: region[offset...])),
              size <= region.count - offset {
            let trailer = region.baseAddress! + offset + size - 4
            let content = (0..<4).reduce(0) { $0 | Int(trailer.load(fromByteOffset: $1, as: UInt8.self)) << (8 * $1) }
            members.append((offset, size, content))
            offset += size
        }
        let (path, operation) = (self.path, self.operation)
        return MemberRun(run: run, threads: threads).queue(
            members, in: data, region: region, firstIndex: firstIndex, label: "weir.gunzip",
            makeContext: { () throws(WeirError) in try Inflater(path: path) }
        ) { inflater, input, member, output in
            var produced = 0
            let code = libdeflate_gzip_decompress(inflater.decompressor, input, member.size, output, member.content,
                                                  &produced)
            guard code != LIBDEFLATE_SUCCESS || produced != member.content else { return nil }
            return .formatCorrupt(.gzip, path: path, operation: operation,
                                  "the member does not inflate to its size and CRC", offset: member.start)
        }
    }
}
