import Glibc
import WeirSystem

/// What identifies the archive a mount reads: its device, inode, size and
/// modification time. The mount reads through a descriptor opened once, so
/// a file renamed over the archive is not read; but then the mount no
/// longer shows what the name holds, and a file written in place would mix
/// two archives' bytes: either way, reads fail (EIO).
package struct ArchiveIdentity: Sendable, Equatable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int
    package var seconds: Int
    package var nanoseconds: Int

    package init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        seconds = status.modificationTime.tv_sec
        nanoseconds = status.modificationTime.tv_nsec
    }

    /// What differs between `self` and `now`, in words; nil when nothing does.
    package func change(to now: ArchiveIdentity?) -> String? {
        guard let now else { return "it is gone" }
        if now.device != device || now.inode != inode { return "another file took its name" }
        if now.size != size { return "its size changed from \(size) to \(now.size) bytes" }
        if now.seconds != seconds || now.nanoseconds != nanoseconds { return "its modification time changed" }
        return nil
    }
}
