import Glibc

/// The system's memory page: the unit of `mmap` offsets, `madvise` ranges and
/// libdispatch's read buffers. Read once from `sysconf`.
package enum Page {
    /// Bytes in a page.
    package static let size = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `bytes` rounded up to whole pages.
    package static func roundUp(_ bytes: Int) -> Int {
        (bytes + size - 1) / size * size
    }

    /// `bytes` rounded down to a whole number of pages.
    package static func roundDown(_ bytes: Int) -> Int {
        bytes & ~(size - 1)
    }
}
