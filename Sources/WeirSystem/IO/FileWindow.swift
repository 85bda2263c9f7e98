import CSupport
import Glibc

/// A read-only mapping of a range of a regular file of its own, for a
/// reader that touches a few bytes here and there (the member index's walk
/// of a tar's headers) beside the compressor's mapping of the same range.
///
/// Why a mapping of its own: pages a reader faults in through the
/// compressor's mapping stay in it (and in the process's memory) until the
/// compressor reaches them, and giving them back makes the compressor fault
/// them in again; a `pread` per header costs a system call each. A second
/// mapping's pages are given back (``release(upTo:)``) as the reader goes,
/// and the compressor's are never touched.
///
/// Guarded as `MappedInput`'s mappings are: a page cut off by a truncation
/// or failing to read reads zeros, and ``faulted`` says so.
///
/// Threads: one at a time.
package final class FileWindow: @unchecked Sendable {  // one thread at a time (above)
    private let base: UnsafeMutableRawPointer
    private let mapped: Int
    private let slot: Int32
    /// The range's bytes.
    package let bytes: UnsafeRawBufferPointer
    /// How far the pages are given back (an address in the mapping).
    private var released: Int

    /// `count` bytes of `file` from `offset`; nil when it cannot be mapped
    /// (the caller reads otherwise).
    package init?(file: Descriptor, offset: Int, count: Int) {
        guard count > 0 else { return nil }
        let start = offset & ~(Page.size - 1)
        let lead = offset - start
        guard let base = mmap(nil, lead + count, PROT_READ, MAP_SHARED, file.fd, off_t(start)), base != MAP_FAILED
        else { return nil }
        let slot = weir_map_guard_register(base, lead + count)
        guard slot >= 0 else {
            munmap(base, lead + count)
            return nil
        }
        (self.base, mapped, self.slot) = (base, lead + count, slot)
        bytes = UnsafeRawBufferPointer(start: base + lead, count: count)
        released = Int(bitPattern: base)
    }

    deinit {
        weir_map_guard_unregister(slot)
        munmap(base, mapped)
    }

    /// Whether a page of the range could not be read (zeros were read instead).
    package var faulted: Bool { weir_map_guard_faulted(slot) }

    /// Gives back the whole pages before byte `offset` of ``bytes`` (with
    /// `end`, every page), which the reader is done with.
    package func release(upTo offset: Int, end: Bool = false) {
        let address = Int(bitPattern: bytes.baseAddress) + offset
        let limit = end ? Int(bitPattern: base) + Page.roundUp(mapped) : Page.roundDown(address)
        guard limit > released else { return }
        madvise(UnsafeMutableRawPointer(bitPattern: released), limit - released, MADV_DONTNEED)
        released = limit
    }
}
