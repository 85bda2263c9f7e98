import Glibc

/// What `stat` says of a file, as much as weir needs.
package struct FileStatus: Sendable {
    /// The mode bits, type included.
    package var mode: mode_t
    /// The device and inode, which identify the file.
    package var device: UInt64
    /// See `device`.
    package var inode: UInt64
    /// The size in bytes.
    package var size: Int
    /// The preferred size of a write (`st_blksize`): the file system's block.
    package var blockSize: Int
    /// Last access and modification times.
    package var accessTime: timespec
    /// See `accessTime`.
    package var modificationTime: timespec
    /// The last change of the inode (`st_ctime`): of its bytes, mode or links.
    package var changeTime: timespec
    /// The owner and group.
    package var owner: uid_t
    /// See `owner`.
    package var group: gid_t

    init(_ info: stat) {
        mode = info.st_mode
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        blockSize = Int(info.st_blksize)
        accessTime = info.st_atim
        modificationTime = info.st_mtim
        changeTime = info.st_ctim
        owner = info.st_uid
        group = info.st_gid
    }

    /// What a regular file of `size` bytes, read-only, would show: a remote
    /// object's status (``Descriptor/init(source:path:)``).
    package init(regularFileOfSize size: Int) {
        mode = S_IFREG | 0o444
        (device, inode, blockSize) = (0, 0, 1 << 16)
        self.size = size
        (accessTime, modificationTime, changeTime) = (timespec(), timespec(), timespec())
        (owner, group) = (0, 0)
    }

    /// `stat` of a path (following links), or nil when it does not exist.
    package static func of(path: String) -> FileStatus? {
        var info = stat()
        guard FileName.withCString(path, { stat($0, &info) }) == 0 else { return nil }
        return FileStatus(info)
    }

    /// `stat` of `name` in the folder open as `folder` (following links),
    /// or nil when it does not exist.
    package static func of(name: String, inFolder folder: Int32) -> FileStatus? {
        var info = stat()
        guard FileName.withCString(name, { fstatat(folder, $0, &info, 0) }) == 0 else { return nil }
        return FileStatus(info)
    }

    /// Whether anything, even a dangling link, is at `path`.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return FileName.withCString(path) { lstat($0, &info) } == 0
    }

    /// Whether `path` is a symbolic link (not followed) to anything but a
    /// FIFO: what zstd skips among the names it is given unless `-f`.
    package static func isLinkToSkip(_ path: String) -> Bool {
        var info = stat()
        guard FileName.withCString(path, { lstat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFLNK else {
            return false
        }
        return FileStatus.of(path: path)?.isFIFO != true
    }

    /// Whether it is a regular file.
    package var isRegularFile: Bool { (mode & S_IFMT) == S_IFREG }
    /// Whether it is a FIFO (a named pipe).
    package var isFIFO: Bool { (mode & S_IFMT) == S_IFIFO }
    /// Whether it is a socket.
    package var isSocket: Bool { (mode & S_IFMT) == S_IFSOCK }
    /// Whether it is a directory.
    package var isDirectory: Bool { (mode & S_IFMT) == S_IFDIR }

    /// Whether both describe the same file.
    package func isSameFile(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }

    /// Whether `later`, the same file's status taken later, says its bytes
    /// may have changed since: another size, modification or change time
    /// (a write moves the change time, which no one can set back).
    package func mayHaveChanged(by later: FileStatus) -> Bool {
        !isSameFile(as: later) || size != later.size
            || modificationTime.tv_sec != later.modificationTime.tv_sec
            || modificationTime.tv_nsec != later.modificationTime.tv_nsec
            || changeTime.tv_sec != later.changeTime.tv_sec || changeTime.tv_nsec != later.changeTime.tv_nsec
    }
}
