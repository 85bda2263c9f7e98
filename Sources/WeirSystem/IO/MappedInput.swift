import CSupport
import Dispatch
import Glibc
import Synchronization

/// Hands out consecutive pieces of a regular file as read-only memory
/// mappings wrapped in `DispatchData`: no `read()` copy, no fresh buffer.
///
/// Why: a `DispatchIO` read allocates a new 1 MiB buffer for every
/// `read()` call (libdispatch's `valloc`); glibc serves each by `mmap`, so
/// every page of the input is zero-filled and faulted in, then copied into
/// by the kernel: a large share of all CPU time (perf: `clear_page`,
/// `_copy_to_iter`, fault handling; bench/results/2026-11-27-comment-
/// numbers.md, "Mapped input"). A mapped piece costs one `mmap` and the
/// page-cache pages are used in place, so compression reads the file at
/// memory speed.
///
/// Each piece is its own mapping, unmapped when the last reference to its
/// data goes away, so what stays mapped is bounded by the pieces in flight.
///
/// A file truncated while mapped would raise SIGBUS on the pages cut off, and
/// so does a page the disk fails to read (EIO). Each mapping is registered
/// with `CSupport`, whose handler maps zeros over such a page and marks the
/// mapping; ``failure`` then reports it (a `pread` of the page tells a read
/// error from a cut), and the pipelines check it before any output made
/// from a piece is written. The
/// file's size is taken again (`fstat`) before each piece, so a file that
/// shrinks or grows between pieces ends where a `read()` loop would end;
/// where `fstat` says the file ends, one byte is read (`pread`) to be
/// sure, and bytes a file holds beyond its size are read, not mapped, to
/// their end: a size that is not the content's loses nothing (issue 37).
///
/// Threads: `next(length:)` is called by one thread at a time (the
/// pipeline's reading thread); ``failure`` may be read from any thread.
final class MappedInput: Sendable {
    /// The file, named as its errors name it.
    private let file: Descriptor
    var path: String { file.path }
    /// Where the next piece starts; advanced by the one reading thread.
    private let offset: Atomic<Int>
    /// Registrations of mappings still alive (slot: the file offset it maps
    /// from), and the file offset of the first fault in those gone.
    private let guards = Locked((live: [Int32: Int](), faultedAt: Int?.none))

    /// Starts at `file`'s current offset; nil when it cannot be mapped (no
    /// offset, a file system that maps nothing (ENODEV) or the SIGBUS guard
    /// cannot be installed): the caller then reads it.
    init?(_ file: Descriptor) {
        let fd = file.fd
        let position = lseek(fd, 0, SEEK_CUR)
        guard position >= 0, weir_map_guard_install() == 0 else { return nil }
        // Mapping a page is allowed past the end; it fails only where the
        // file system cannot map at all.
        guard let probe = mmap(nil, Page.size, PROT_READ, MAP_SHARED, fd, off_t(Int(position) & ~(Page.size - 1))),
              probe != MAP_FAILED else { return nil }
        munmap(probe, Page.size)
        self.file = file
        self.offset = Atomic(Int(position))
    }

    /// Why bytes read from one of its mappings are zeros, not the file's, or
    /// nil when none faulted: the file was cut below the first faulting byte
    /// while it was being read, or else the disk failed to read its page
    /// (`read failed:` and what a `pread` of that byte says now, or EIO when
    /// it reads now).
    var failure: WeirError? {
        let faultedAt: Int? = guards.withLock { state in
            var first = state.faultedAt
            for (slot, start) in state.live {
                let offset = weir_map_guard_fault_offset(slot)
                if offset >= 0 { first = min(first ?? .max, start + offset) }
            }
            return first
        }
        guard let faultedAt else { return nil }
        var byte: UInt8 = 0
        let got = Descriptor.retrying { pread(file.fd, &byte, 1, off_t(faultedAt)) }
        if got < 0 { return WeirError.system(errno, path: path, operation: .read) }
        if got == 0 {
            return WeirError.changedWhileRead(path: path, operation: .read, shrank: true)
        }
        return WeirError.system(EIO, path: path, operation: .read)
    }

    /// The next at most `length` bytes; empty at the end of the file.
    func next(length: Int) throws(WeirError) -> DispatchData {
        let size = try file.status(operation: .read).size
        let offset = self.offset.load(ordering: .relaxed)
        let count = min(length, max(0, size - offset))
        guard count > 0 else { return try readBeyondSize(at: offset, length: length) }
        let start = offset & ~(Page.size - 1)
        let lead = offset - start
        let mapped = lead + count
        guard let base = mmap(nil, mapped, PROT_READ, MAP_SHARED, file.fd, off_t(start)),
              base != MAP_FAILED else {
            throw WeirError.system(errno, path: path, operation: .map)
        }
        // Start reading the pages from disk now, while earlier pieces are
        // compressed; they are mapped in (and count as memory) only when touched.
        madvise(base, mapped, MADV_WILLNEED)
        let slot = weir_map_guard_register(base, mapped)
        guard slot >= 0 else {
            munmap(base, mapped)
            throw WeirError.library(path: path, operation: .map, "too many mappings in use")
        }
        guards.withLock { $0.live[slot] = start }
        self.offset.store(offset + count, ordering: .relaxed)
        // Keep the descriptor's offset where a read() loop would leave it,
        // for whoever shares it (a shell's redirection).
        lseek(file.fd, off_t(offset + count), SEEK_SET)
        nonisolated(unsafe) let pointer = base
        return DispatchData(
            bytesNoCopy: UnsafeRawBufferPointer(start: base + lead, count: count),
            deallocator: .custom(nil, { [guards] in
                guards.withLock { state in
                    let offset = weir_map_guard_fault_offset(slot)
                    if offset >= 0 { state.faultedAt = min(state.faultedAt ?? .max, start + offset) }
                    state.live[slot] = nil
                }
                weir_map_guard_unregister(slot)
                munmap(pointer, mapped)
            }))
    }

    /// The at most `length` bytes at `offset`, where `fstat` says the file
    /// ends: empty at its real end (one `pread` of a byte finds it), else
    /// what the file holds beyond its stated size, read.
    private func readBeyondSize(at offset: Int, length: Int) throws(WeirError) -> DispatchData {
        var probe: UInt8 = 0
        guard try withUnsafeMutableBytes(of: &probe, { (byte) throws(WeirError) in
            try file.read(into: byte, at: offset, operation: .read)
        }) == 1 else { return .empty }
        guard let base = malloc(length) else { throw WeirError.system(ENOMEM, path: path, operation: .read) }
        let buffer = UnsafeMutableRawBufferPointer(start: base, count: length)
        let got: Int
        do throws(WeirError) {
            got = try file.read(into: buffer, at: offset, operation: .read)
        } catch {
            free(base)
            throw error
        }
        self.offset.store(offset + got, ordering: .relaxed)
        lseek(file.fd, off_t(offset + got), SEEK_SET)
        return DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: base, count: got), deallocator: .free)
    }
}
