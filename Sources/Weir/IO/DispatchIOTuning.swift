import CSupport
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide settings that make libdispatch's read path cheap for a
/// streaming tool. A program calls ``configureProcess()`` once, at start,
/// before any channel exists; the engine works without it, only slower and
/// with more page faults through pipes.
///
/// libdispatch allocates a fresh buffer for every `read()` it issues
/// (`posix_memalign`, `min(length, high water, its chunk size)` bytes, 1 MiB
/// by default) and frees it when the last `DispatchData` drops it. A buffer
/// that large comes from a fresh mapping (or a heap glibc trims), so the kernel
/// zeroes and faults in every page of the input; kept in the heap instead,
/// equal large page-aligned buffers fragment it and memory grows with the
/// stream. Small pieces from one heap that keeps its free memory circulate:
/// freed in order, neighbours coalesce and are reused, with no page faults
/// and flat memory. The chunk a pipeline reads is then many regions, fed to
/// libzstd region by region without a copy. Measurements: docs/pipes.md.
public enum DispatchIOTuning {
    /// The bytes of each libdispatch read buffer (and so of each `read()`).
    public static let readPieceSize = 32 << 10
    /// Allocations from this size up are mapped, and unmapped when freed.
    static let mmapThreshold = 1 << 20
    /// Free bytes the heap keeps at its top instead of giving them back.
    static let trimThreshold = 64 << 20

    /// Sets libdispatch's read buffer size to ``readPieceSize`` and glibc's
    /// allocator to keep such buffers in one heap. Returns whether
    /// libdispatch's knob was found.
    @discardableResult
    public static func configureProcess() -> Bool {
        _ = weir_keep_heap_buffers(Int32(mmapThreshold), Int32(trimThreshold))
        configured.withLock { $0 = true }
        return setReadBufferSize(readPieceSize)
    }

    /// Whether ``configureProcess()`` ran: only then do readers change the
    /// read buffer size.
    private static let configured = Locked(false)

    /// Called by a reader before its channel's first read, when the process
    /// was configured: a stream reads in ``readPieceSize`` pieces; a regular
    /// file read through a channel (`--no-mmap`) in whole chunks, mapped
    /// buffers, because libdispatch's disk path fragments the heap with small
    /// pieces (docs/pipes.md). The size is process-wide: meant for a program
    /// that reads one input at a time, as weir does.
    static func prepareRead(stream: Bool, chunkSize: Int) {
        guard configured.current else { return }
        setReadBufferSize(stream ? readPieceSize : max(chunkSize, mmapThreshold))
    }

    /// Sets libdispatch's per-read buffer size (rounded up to whole pages):
    /// `_dispatch_iocntl(DISPATCH_IOCNTL_CHUNK_PAGES, pages)`, which the
    /// toolchain's libdispatch exports without declaring it. Returns false
    /// when the running libdispatch does not have it.
    @discardableResult
    public static func setReadBufferSize(_ bytes: Int) -> Bool {
        typealias IOControl = @convention(c) (UInt32, UInt64) -> Void
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_iocntl") else { return false }
        let page = max(1, Int(sysconf(Int32(_SC_PAGESIZE))))
        let chunkPages: UInt32 = 1  // DISPATCH_IOCNTL_CHUNK_PAGES
        unsafeBitCast(symbol, to: IOControl.self)(chunkPages, UInt64((max(bytes, page) + page - 1) / page))
        return true
    }
}
