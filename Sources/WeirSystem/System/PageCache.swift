import CSupport
import Glibc

/// The page cache's pages of a file about to be replaced.
package enum PageCache {
    /// How long after its last change a file's pages are taken to be written
    /// back, where the kernel cannot say: its default `dirty_expire_centisecs`.
    static let writebackAge = 30

    /// Drops the page-cache pages of the file at `path`, last modified at
    /// `modified`; the file itself, on disk, is untouched.
    ///
    /// Why: an output that replaces the file (``OutputFile`` with `-f`)
    /// keeps it until the new one is complete, and its pages would stay
    /// cached until then, so every page of the new file is fresh memory; on
    /// a VM that hands free memory back to its host, copying into fresh
    /// pages cost more system time (docs/decompression.md, "Overwriting a
    /// file"). zstd removes the old file first and reuses its pages;
    /// this frees the same pages and keeps the old file. Only when none of
    /// its pages is dirty or being written (`cachestat`; before Linux 6.5:
    /// unchanged for ``writebackAge`` seconds): dropping those would first
    /// write them back, for a file that is about to go. The call is
    /// `posix_fadvise` (`POSIX_FADV_DONTNEED`).
    package static func drop(of path: String, modified: timespec) {
        let fd = FileName.withCString(path) { Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
        guard fd >= 0 else { return }  // unreadable: its pages stay cached, nothing else changes
        defer { Glibc.close(fd) }
        let unwritten = weir_unwritten_pages(fd)
        if unwritten > 0 { return }
        if unwritten < 0 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            guard now.tv_sec - modified.tv_sec >= writebackAge else { return }
        }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
    }
}
