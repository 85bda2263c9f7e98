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
/// Bound: a member takes one of the run's slots before it is queued, its
/// output buffer (pooled) goes back once written: at most `slots` members'
/// output, and `threads + 1` idle buffers.
/// The mapping stays alive while a job reads it (its DispatchData is held).
/// Threads: `decode` runs on the run's thread; jobs on the pool's queue.
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
        let control = run.control
        let (path, operation, run) = (self.path, self.operation, self.run)
        let pool = WorkerPool<Inflater>(width: threads, label: "weir.gunzip",
                                        makeContext: { () throws(WeirError) in try Inflater(path: path) },
                                        onContextFailure: { control.fail($0) })
        // The run's members first (their headers and trailers only): the
        // output buffers are pooled, of the largest member's size, so that no
        // member faults in a fresh mapping of its own.
        var members: [(start: Int, size: Int, content: Int)] = []
        var offset = 0
        while let size = GzipMember.recordedSize(UnsafeRawBufferPointer(rebasing: region[offset...])),
              size <= region.count - offset {
            let trailer = region.baseAddress! + offset + size - 4
            let content = (0..<4).reduce(0) { $0 | Int(trailer.load(fromByteOffset: $1, as: UInt8.self)) << (8 * $1) }
            members.append((offset, size, content))
            offset += size
        }
        let buffers = BufferPool(size: max(1, members.map(\.content).max() ?? 1), keep: threads + 1)
        var index = firstIndex
        for member in members {
            guard let ticket = control.takeSlot() else { return (member.start, index) }
            let number = index
            index += 1
            nonisolated(unsafe) let input = region.baseAddress! + member.start  // in `data`, held by the job
            pool.submit { inflater in
                guard let inflater, !control.isFailed, let output = buffers.take() else { return ticket.release() }
                var produced = 0
                let code = withExtendedLifetime(data) {
                    libdeflate_gzip_decompress(inflater.decompressor, input, member.size, output, member.content,
                                               &produced)
                }
                guard code == LIBDEFLATE_SUCCESS, produced == member.content else {
                    buffers.recycle(output)
                    control.fail(.formatCorrupt(.gzip, path: path, operation: operation,
                                                "the member does not inflate to its size and CRC", offset: member.start))
                    return ticket.release()
                }
                run.submit(number, buffers.wrap(output, count: member.content), ticket: ticket)
            }
        }
        return (offset, index)
    }
}
