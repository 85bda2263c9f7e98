import Glibc

/// One inode of a mounted archive (``MountTree``): a folder, a file, a
/// link, a device or a FIFO, with the metadata tar stored for it. A hard
/// link is not a node of its own: its name leads to its target's node,
/// whose `links` counts the names.
package struct MountNode: Sendable {
    package enum Kind: Sendable, Equatable {
        case folder, file, symbolicLink, characterDevice, blockDevice, fifo
    }

    package var kind: Kind
    /// Permission bits (07777).
    package var mode: UInt32
    package var uid: Int
    package var gid: Int
    /// Seconds since the epoch.
    package var mtime: Int64
    /// The size `stat` shows: a file's bytes, a link's target length.
    package var size: Int
    /// Where a file's bytes begin in the decompressed content.
    package var dataOffset: Int
    /// Where the member's header blocks lie in the content (empty: none to
    /// check, a plain `.zst` or a folder the tar implies).
    package var header: Range<Int>
    /// The bytes of data the archive holds for the member (less than
    /// `size` for a member cut short, or a sparse one).
    package var dataLength: Int
    /// The member's tar type and name as the index lists them, for the
    /// check of its header blocks at its first open.
    package var type: UInt8
    package var memberPath: [UInt8]
    /// A symbolic link's target, a hard link's in the index (for the check).
    package var link: [UInt8]
    /// A device's numbers.
    package var device: (major: Int, minor: Int)
    /// Names that lead here; a folder's is 2 and its sub-folders.
    package var links: Int
    /// A folder's entries: name → node.
    package var children: [[UInt8]: Int]
    /// A GNU sparse member (type `S`): its holes are not stored, and the
    /// mount does not read them (EIO).
    package var sparse: Bool

    init(kind: Kind, mode: UInt32, uid: Int, gid: Int, mtime: Int64) {
        self.kind = kind
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.mtime = mtime
        size = 0
        dataOffset = 0
        header = 0 ..< 0
        dataLength = 0
        type = 0
        memberPath = []
        link = []
        device = (0, 0)
        links = 1
        children = [:]
        sparse = false
    }

    /// The `st_mode` file-type bits of the node's kind.
    package var typeBits: UInt32 {
        switch kind {
        case .folder: S_IFDIR
        case .file: S_IFREG
        case .symbolicLink: S_IFLNK
        case .characterDevice: S_IFCHR
        case .blockDevice: S_IFBLK
        case .fifo: S_IFIFO
        }
    }
}
