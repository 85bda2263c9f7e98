import Glibc

/// One inode of a mounted archive (``MountTree``): a folder, a file, a
/// link, a device or a FIFO, with the metadata tar stored for it. A hard
/// link is not a node of its own: its name leads to its target's node,
/// whose `links` counts the names.
///
/// A node holds no array of its own: its member's name and link target are
/// ranges of the tree's one byte buffer, and a folder's entries a range of
/// the tree's entry list, so that a tree of a million members is a few
/// flat arrays rather than millions of small allocations.
package struct MountNode: Sendable {
    package enum Kind: UInt8, Sendable, Equatable {
        case folder, file, symbolicLink, characterDevice, blockDevice, fifo
    }

    package var kind: Kind
    /// The member's tar type as the index lists it, for the check of its
    /// header blocks at its first read (or open).
    package var type: UInt8
    /// A GNU sparse member (type `S`): its holes are not stored; its reads
    /// go through its map, read at its check (``MountedArchive``).
    package var sparse: Bool
    /// Permission bits (07777).
    package var mode: UInt32
    package var uid: UInt32
    package var gid: UInt32
    /// Names that lead here; a folder's is 2 and its sub-folders.
    package var links: Int32
    /// The bytes of header blocks before `dataOffset` (0: none to check, a
    /// plain `.zst` or a folder the tar implies); here, not with the other
    /// lengths, so that it fills the room before `mtime` (a node of 88
    /// bytes, not 96: a tree of a million members is a million nodes).
    var headerBlockBytes: UInt32
    /// Seconds since the epoch.
    package var mtime: Int64
    /// The size `stat` shows: a file's bytes, a link's target length.
    package var size: Int
    /// Where a file's bytes begin in the decompressed content.
    package var dataOffset: Int
    /// The bytes of data the archive holds for the member (less than
    /// `size` for a member cut short, or a sparse one).
    package var dataLength: Int
    /// The bytes of header blocks before `dataOffset` (4 GiB or more, which
    /// no tar writes, is kept as less: the check of the blocks then fails).
    package var headerLength: Int {
        get { Int(headerBlockBytes) }
        set { headerBlockBytes = UInt32(clamping: newValue) }
    }
    /// A device's numbers.
    package var device: (major: UInt32, minor: UInt32)
    /// Where the member's name as the index lists it begins in the tree's
    /// bytes, and its length; a link target follows it there.
    var pathStart: Int
    var pathLength: UInt32
    var linkLength: UInt32
    /// A folder's entries: a range of the tree's entry list, sorted by name.
    var firstEntry: UInt32
    var entryCount: UInt32

    init(kind: Kind, mode: UInt32, uid: UInt32, gid: UInt32, mtime: Int64) {
        self.kind = kind
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.mtime = mtime
        type = 0
        sparse = false
        links = 1
        size = 0
        dataOffset = 0
        dataLength = 0
        headerBlockBytes = 0
        device = (0, 0)
        pathStart = 0
        pathLength = 0
        linkLength = 0
        firstEntry = 0
        entryCount = 0
    }

    /// Where the member's header blocks lie in the content (empty: none to check).
    package var header: Range<Int> { dataOffset - headerLength ..< dataOffset }

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
