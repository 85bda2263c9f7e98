import WeirTar
/// One member of a `.tar.zst` as its member index records it
/// (docs/members.md): its name and metadata as `tar tvf` shows them, and
/// where its bytes lie in the decompressed content.
public struct TarMember: Sendable, Equatable {
    /// The index's record.
    package let record: MemberIndex.Member
    /// Its place in the archive (0 for the first member).
    public let position: Int
    /// Where its header blocks begin as tar reads them: where the previous
    /// member ends (0 for the first). The record's own offset lies past it
    /// only when the index leaves a gap, which a tar written end to end
    /// never has: the gap may hold the member's own pax or long-name
    /// headers, which override the fields of the block the record points
    /// at, so a member is checked, and written, from here.
    package let blocksStart: Int

    /// `record`, the member at `position`, after a member that ends at `previousEnd`.
    package init(_ record: MemberIndex.Member, position: Int, previousEnd: Int) {
        self.record = record
        self.blocksStart = min(previousEnd, record.headerOffset)
        self.position = position
    }

    /// Every member of `records`, the whole list in archive order.
    static func list(_ records: [MemberIndex.Member]) -> [TarMember] {
        var previousEnd = 0
        return records.enumerated().map { position, record in
            defer { previousEnd = record.end }
            return TarMember(record, position: position, previousEnd: previousEnd)
        }
    }

    /// The full name as tar stores it (pax `path` or GNU long name
    /// included), in bytes: not necessarily UTF-8.
    public var path: [UInt8] { record.path }
    /// The name as text (bytes that are not UTF-8 replaced).
    public var name: String { record.name }
    /// Tar's type flag as stored: `0` file, `1` hard link, `2` symbolic link,
    /// `3`, `4` devices, `5` folder, `6` FIFO, `S` GNU sparse.
    public var type: UInt8 { record.type }
    /// The link target of a hard or symbolic link, else empty.
    public var link: [UInt8] { record.link }
    /// The size `tar tvf` prints (a sparse member's real size).
    public var size: Int { record.size }
    /// The modification time, in seconds since the epoch.
    public var modificationTime: Int64 { record.mtime }
    /// The permission bits (07777).
    public var mode: UInt32 { record.mode }
    public var uid: Int { record.uid }
    public var gid: Int { record.gid }
    /// The owner's and group's names (empty when the archive has none).
    public var userName: [UInt8] { record.uname }
    public var groupName: [UInt8] { record.gname }
    /// Where the member's header blocks, data and padding lie in the
    /// content, its header blocks from where the previous member ends.
    public var contentRange: Range<Int> { blocksStart ..< record.end }
    /// How many bytes of header blocks are read and checked before its data.
    package var headerBlocksLength: Int { record.dataOffset - blocksStart }

    /// Whether the member is a regular file whose data is its contents (not
    /// a GNU sparse member, whose stored data leaves the holes out).
    public var isPlainFile: Bool {
        (record.type == UInt8(ascii: "0") || record.type == 0 || record.type == UInt8(ascii: "7"))
            && record.dataLength >= record.size
    }
}
