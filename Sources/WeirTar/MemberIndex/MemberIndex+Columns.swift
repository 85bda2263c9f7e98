import WeirFormats
import WeirSystem

/// Version 2 of the record list (docs/members.md, "Its content"): the
/// members in blocks of columns, compressed as they come, in one zstd
/// stream; the counts that are known only at the end stand uncompressed
/// before it.
///
/// Why columns: a member's fields differ in kind (a name, a size, a time,
/// a mode), and zstd finds far more in a run of one kind than in rows that
/// interleave them: on the Linux tarball 6.1 bytes a member where version
/// 1's rows took 9.1, on a 61 MB source tar 7.9 where they took 11.6 (both
/// at level 3; pixz's index of names and offsets: 6.6 and 8.95).
extension MemberIndex {
    /// The columns of a block, in the order they are stored.
    enum Column: Int, CaseIterable {
        /// Header offset minus the previous member's end (`uvarint`).
        case gap
        /// Header blocks minus one (`uvarint`).
        case headerBlocks
        /// Data length minus what the size predicts (`svarint`, see ``predictedData(type:size:)``).
        case dataExtra
        /// The size's three low bytes, one column each, then the rest (`uvarint`).
        case size0, size1, size2, sizeHigh
        /// mtime minus the previous member's (`svarint`).
        case mtime
        /// The type flag (1 byte), then mode, uid, gid (`uvarint`).
        case type, mode, uid, gid
        /// The path: how many of the previous path's folders it leaves
        /// (`uvarint`), then what follows the folders it keeps, ended by NUL.
        case pathPop, pathRest
        /// The link target, ended by NUL.
        case link
        /// Owner, group: 0 for the previous member's, else 1 then the name ended by NUL.
        case uname, gname
        /// A device's major and minor (`uvarint` each; types 3 and 4 only).
        case device
    }

    /// The data length a member of `type` and `size` has in a well-formed
    /// tar (its data rounded to 512): what the data column is coded against.
    static func predictedData(type: UInt8, size: Int) -> Int {
        switch type {
        case UInt8(ascii: "0"), UInt8(ascii: "1"): TarHeader.blocks(size) ?? 0
        default: 0
        }
    }

    /// The level the record list is compressed at for a run at `level`: 3
    /// at the fast levels, where every millisecond of a run counts, up to
    /// 9 where a run spends seconds a gigabyte (and the index is 6% smaller).
    package static func level(forRunLevel level: Int) -> Int { min(max(level, 3), 9) }

    /// Compressed index bytes kept in memory; past it they go to a spill
    /// file (``IndexSpill``): about 40,000 members' worth.
    package static let spillBound = 256 << 10

    /// A member index's skippable frame, ready to write: `head`, then the
    /// spill file's bytes, then `tail`.
    package struct IndexFrame: Sendable {
        package let head: [UInt8]
        package let spill: IndexSpill?
        package let tail: [UInt8]

        package init(head: [UInt8], spill: IndexSpill?, tail: [UInt8]) {
            (self.head, self.spill, self.tail) = (head, spill, tail)
        }

        /// The frame's size in bytes.
        package var count: Int { head.count + (spill?.size ?? 0) + tail.count }

        /// The frame's bytes in pieces of at most `size` (the first and last
        /// may differ), read back from the spill file as they are asked for:
        /// `body` gets each in turn, in order.
        ///
        /// - Throws: ``WeirError`` when the spill file cannot be read back
        ///   (`path` names the output), or what `body` throws.
        package func forEachPiece(size: Int, path: String,
                                  _ body: ([UInt8]) throws(WeirError) -> Void) throws(WeirError) {
            try body(head)
            if let spill, try !spill.forEachPiece(size: size, { piece throws(WeirError) in try body(Array(piece)) }) {
                throw WeirError.library(path: path, operation: .writeMemberIndex,
                                        "the member index's spill file could not be read back")
            }
            if !tail.isEmpty { try body(tail) }
        }

        /// The whole frame in memory.
        package func bytes(path: String) throws(WeirError) -> [UInt8] {
            var all: [UInt8] = []
            all.reserveCapacity(count)
            try forEachPiece(size: 1 << 20, path: path) { all += $0 }
            return all
        }
    }

    /// Raw column bytes gathered before a block goes to the compressor:
    /// bounds what the writer holds uncompressed, whatever the member count.
    package static let blockBytes = 1 << 20
    /// The compressor's window: a block and the one before it, so names
    /// repeat across blocks, in bounded memory (about 1.5 MiB at level 3).
    static let windowLog: Int32 = 20
}
