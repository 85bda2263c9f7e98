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

    /// Linux's `MADV_POPULATE_WRITE` (5.14).
    private static let populateWrite: Int32 = 23

    /// Makes now, writable, the pages that `count` bytes at `start` lie in,
    /// their bytes unchanged: for a buffer about to be written whole, one
    /// call instead of a fault at each page's first write, which costs (in a
    /// virtual machine above all) several times the kernel's work for the
    /// page. A kernel without it refuses (EINVAL), and the pages are then
    /// made by faults as before; no failure is reported.
    package static func populate(_ start: UnsafeMutableRawPointer, _ count: Int) {
        advise(start, count, populateWrite)
    }

    /// Linux's `MADV_HUGEPAGE`.
    private static let hugePage: Int32 = 14

    /// Asks the kernel to back the pages that `count` bytes at `start` lie in
    /// with transparent huge pages (2 MiB on x86-64) where a whole one fits,
    /// which it does only on request when THP is set to `madvise`: call it
    /// before the buffer's pages are made. For a large
    /// buffer written whole and then read at random (a decoded frame, which
    /// the decoder reads back as it copies matches): one fault or populate
    /// step per 2 MiB instead of 512, and the decoder's accesses spread over
    /// few TLB entries. The cost: where THP's `defrag` is `madvise` (the
    /// kernel's default), a huge page not free at once is made by compacting
    /// memory in the fault. The bytes are unchanged; a kernel without THP
    /// refuses (EINVAL) and the pages stay small; no failure is reported.
    package static func preferHuge(_ start: UnsafeMutableRawPointer, _ count: Int) {
        advise(start, count, hugePage)
    }

    /// `madvise(advice)` on the pages that `count` bytes at `start` lie in;
    /// a refusal is not reported (the callers' advice only saves work).
    private static func advise(_ start: UnsafeMutableRawPointer, _ count: Int, _ advice: Int32) {
        guard count > 0 else { return }
        let from = roundDown(Int(bitPattern: start))
        guard let base = UnsafeMutableRawPointer(bitPattern: from) else { return }
        _ = madvise(base, Int(bitPattern: start) + count - from, advice)
    }

    /// Reserves room in `array` for `capacity` elements and makes its pages (``populate(_:_:)``).
    package static func populate<Element>(_ array: inout [Element], capacity: Int) {
        array.reserveCapacity(capacity)
        let bytes = array.capacity * MemoryLayout<Element>.stride
        array.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { populate(UnsafeMutableRawPointer(base), bytes) }
        }
    }
}
