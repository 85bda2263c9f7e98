/// The member index of a `.tar.zst` (docs/members.md): for each member of
/// the tar stream the content holds, its name, its metadata as `tar tvf`
/// shows it, and where its headers, data and padding lie in the content.
///
/// A pure value: ``encoded(level:path:)`` gives the bytes of its skippable
/// frame (magic `0x184D2A5B`, `WEIRTARI`, one zstd frame with its content
/// size and checksum holding the record list), ``decode(frame:path:offset:)``
/// reads them back and refuses, with the file and the frame's offset, every
/// frame that is not exactly that. ``read(in:table:)`` finds it in a file
/// from the file's seek table. Nothing in it knows where the bytes come from.
package struct MemberIndex: Equatable, Sendable {
    /// What the index records of one member. Offsets are in the content
    /// (the decoded stream), not in the file.
    package struct Member: Equatable, Sendable {
        /// Where the member's first header block begins (its pax `x` or GNU
        /// `L`/`K` blocks included).
        package var headerOffset: Int
        /// Bytes of header blocks: a multiple of 512, at least one block.
        package var headerLength: Int
        /// Bytes of data and padding after the headers (a sparse member: its
        /// stored data; a member cut short: what there is of it).
        package var dataLength: Int
        /// The size `tar tvf` prints (a sparse member: its real size).
        package var size: Int
        /// Seconds since the epoch.
        package var mtime: Int64
        /// Permission bits (07777).
        package var mode: UInt32
        package var uid: Int
        package var gid: Int
        /// Tar's type flag as stored (`0` file, `5` folder, `S` GNU sparse…).
        package var type: UInt8
        /// The full name as `tar tf` prints it, in tar's bytes (not necessarily UTF-8).
        package var path: [UInt8]
        /// The link target of a hard (`1`) or symbolic (`2`) link, else empty.
        package var link: [UInt8]
        package var uname: [UInt8]
        package var gname: [UInt8]
        /// A device's (`3`, `4`) major and minor numbers, else 0 (recorded
        /// from version 2 of the record list: 0 in an older index).
        package var devmajor: Int
        package var devminor: Int

        /// Creates a member record.
        package init(headerOffset: Int, headerLength: Int, dataLength: Int, size: Int, mtime: Int64 = 0,
                     mode: UInt32 = 0o644, uid: Int = 0, gid: Int = 0, type: UInt8 = UInt8(ascii: "0"),
                     path: [UInt8], link: [UInt8] = [], uname: [UInt8] = [], gname: [UInt8] = [],
                     devmajor: Int = 0, devminor: Int = 0) {
            self.headerOffset = headerOffset
            self.headerLength = headerLength
            self.dataLength = dataLength
            self.size = size
            self.mtime = mtime
            self.mode = mode
            self.uid = uid
            self.gid = gid
            self.type = type
            self.path = path
            self.link = link
            self.uname = uname
            self.gname = gname
            self.devmajor = devmajor
            self.devminor = devminor
        }

        /// Where the member's data begins: just past its header blocks.
        package var dataOffset: Int { headerOffset + headerLength }
        /// Where the member's bytes (headers, data, padding) end.
        package var end: Int { dataOffset + dataLength }
        /// The member's name as text (invalid UTF-8 repaired, for display).
        package var name: String { String(decoding: path, as: UTF8.self) }
    }

    /// The magic number of the index's skippable frame (nibble 11); the
    /// seek table's is `0x184D2A5E`.
    package static let skippableMagic: UInt32 = 0x184D_2A5B
    /// The ASCII magic that begins the skippable frame's content.
    package static let contentMagic: [UInt8] = Array("WEIRTARI".utf8)
    /// The record list's version this code writes and reads.
    package static let version = 1

    /// The members, in archive order.
    package var members: [Member]
    /// Flags bit 0: the tar stream ended early (no end blocks, or a member cut short).
    package var endedEarly: Bool
    /// Where the tar's end blocks begin in the content, or where the content
    /// ends when the tar ended early.
    package var endOffset: Int
    /// The decoded size of the whole content the index describes.
    package var contentSize: Int

    /// Creates an index.
    package init(members: [Member], endedEarly: Bool, endOffset: Int, contentSize: Int) {
        self.members = members
        self.endedEarly = endedEarly
        self.endOffset = endOffset
        self.contentSize = contentSize
    }
}
