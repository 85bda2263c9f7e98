import CSupport
import Glibc

/// What puts written files and names on disk, besides a file's own
/// `fdatasync` (``OutputFile/syncData()``): a folder's entries (`fsync`),
/// a whole file system (`syncfs`: one journal commit for many files and
/// folders, why ``CommitQueue`` commits in groups), and the check that one
/// file's writeback went through. Errors are ``WeirError`` `.sync` naming
/// the folder or file.
package enum DiskSync {
    /// Puts the entries of `folder` on disk (`fsync` of the folder), so that
    /// a name given there survives a power cut.
    package static func folder(_ folder: String) throws(WeirError) {
        let opened = try openFolder(folder)
        defer { opened.close() }
        if Descriptor.retrying({ Int(fsync(opened.fd)) }) != 0 {
            throw WeirError.system(errno, path: folder, operation: .sync)
        }
    }

    /// Puts everything written on the file system that holds `folder` on
    /// disk, names included (`syncfs`).
    package static func fileSystem(holding folder: String) throws(WeirError) {
        let opened = try openFolder(folder)
        defer { opened.close() }
        try fileSystem(of: opened)
    }

    /// Puts everything written on the file system that holds the open
    /// `file` on disk (`syncfs`). Before Linux 5.8 it reports no write error
    /// of an earlier writeback: ``waitWritten(_:)`` does, per file.
    package static func fileSystem(of file: Descriptor) throws(WeirError) {
        if weir_syncfs(file.fd) != 0 { throw WeirError.system(errno, path: file.path, operation: .sync) }
    }

    /// Whether a `syncfs` of the file system that holds `file` puts its
    /// files on disk. Not on FUSE: the kernel forwards `syncfs` only to
    /// virtiofs, so a daemon's files (sshfs, mergerfs, s3fs) are never
    /// synced by it, while `fsync` and a folder's `fsync` reach the daemon.
    /// Found by scripts/harness/fault-test: `weir -r --rm` removed inputs there
    /// with no sync of their outputs at all.
    package static func fileSystemSyncReachesFiles(_ file: Descriptor) -> Bool {
        weir_fs_magic(file.fd) != fuseMagic
    }

    /// The same for the file system that holds `folder` (`statfs`).
    package static func fileSystemSyncReachesFiles(inFolder folder: String) -> Bool {
        FileName.withCString(folder) { weir_fs_magic_path($0) } != fuseMagic
    }

    /// FUSE_SUPER_MAGIC, linux/magic.h.
    static let fuseMagic: UInt = 0x6573_5546

    /// Waits for the writeback of the open `file` and reports its own
    /// write error (EIO, ENOSPC): after a `syncfs` has written it, a check
    /// that costs no journal commit and no device flush.
    package static func waitWritten(_ file: Descriptor) throws(WeirError) {
        if Descriptor.retrying({ Int(weir_wait_written(file.fd)) }) != 0 {
            throw WeirError.system(errno, path: file.path, operation: .sync)
        }
    }

    private static func openFolder(_ folder: String) throws(WeirError) -> Descriptor {
        let fd = FileName.withCString(folder) { Glibc.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw WeirError.system(errno, path: folder, operation: .sync) }
        return Descriptor(fd, path: folder)
    }
}
