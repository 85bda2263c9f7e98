import CSupport
import Dispatch
import Glibc

/// Sizes libdispatch's read buffers to the reads a pipeline issues, so that a
/// chunk arrives as one contiguous buffer: compressed in place by the one-shot
/// `ZSTD_compress2` (no streaming window copy, no window buffer per worker),
/// with one `DispatchData` region per chunk instead of hundreds.
///
/// libdispatch reads into a buffer of `min(length, high water, its chunk
/// size)` bytes (1 MiB by default) and hands it over when full or at the
/// low-water mark. That chunk size is *process-wide*, one for every channel,
/// set through `_dispatch_iocntl`, which the toolchain's libdispatch has
/// without declaring it (a weak reference in CSupport reaches it, also when
/// the runtime is linked statically). So it is a pipeline's option
/// (`sizesReadBuffers` of the compression and decompression options): a
/// reader whose pipeline asks sets it to its own read size before its
/// channel's first read; readers side by side with different sizes set it in
/// turn, the last one for all. The executable asks on every pipeline it runs
/// (one read size per run). Each read allocates a fresh buffer of that size:
/// cheap only with an allocator that reuses freed page runs (the executable
/// links jemalloc; see docs/pipes.md).
package enum DispatchIOTuning {
    /// Sets libdispatch's per-read buffer size (rounded up to whole pages):
    /// `_dispatch_iocntl(DISPATCH_IOCNTL_CHUNK_PAGES, pages)`. Returns false
    /// when the running libdispatch does not have it.
    @discardableResult
    package static func setReadBufferSize(_ bytes: Int) -> Bool {
        guard weir_dispatch_iocntl_available() else { return false }
        let chunkPages: UInt32 = 1  // DISPATCH_IOCNTL_CHUNK_PAGES
        weir_dispatch_iocntl(chunkPages, UInt64(Page.roundUp(max(bytes, 1)) / Page.size))
        return true
    }
}
