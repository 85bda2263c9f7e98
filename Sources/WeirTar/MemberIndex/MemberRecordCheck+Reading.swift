/// The check as every reader makes it before a member's header blocks are
/// read (`TarArchive`'s reads and `weir -t` in the engine, `weir mount`):
/// where the blocks lie, how many there are, then the blocks read and
/// checked against the record. Written once here, so that the three say
/// the same of the same index.
extension MemberRecordCheck {
    /// Why the header blocks at `blocks` (content offsets) are not read
    /// from a content that ends at `contentEnd`: the member, read to `end`
    /// with its data (or its header blocks alone, when `end` is nil), runs
    /// past the content, or the blocks are more than a reader takes
    /// (``headerBlocksProblem(_:)``); nil when they are read.
    package static func readProblem(blocks: Range<Int>, through end: Int?, contentEnd: Int) -> String? {
        if let end {
            if end > contentEnd { return "it ends at \(end), past the content's end at \(contentEnd)" }
        } else if blocks.upperBound > contentEnd {
            return "its header blocks end at \(blocks.upperBound), past the content's end at \(contentEnd)"
        }
        return headerBlocksProblem(blocks.count)
    }

    /// Why the record — `path`, `type`, `link`, `dataLength`, `size` — is
    /// not what its header blocks at `blocks` say: first
    /// ``readProblem(blocks:through:contentEnd:)``, then the blocks `read`
    /// gives checked by ``problem(in:path:type:link:dataLength:size:)``.
    /// `passed` is handed the blocks when they passed.
    ///
    /// - Returns: nil when they passed.
    /// - Throws: what `read` throws.
    package static func problem<Failure: Error>(
        blocks: Range<Int>, through end: Int?, contentEnd: Int, path: [UInt8], type: UInt8, link: [UInt8],
        dataLength: Int, size: Int, read: (Range<Int>) throws(Failure) -> [UInt8],
        passed: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(Failure) -> String? {
        if let problem = readProblem(blocks: blocks, through: end, contentEnd: contentEnd) { return problem }
        let header = try read(blocks)
        return header.withUnsafeBytes { all in
            if let problem = problem(in: all, path: path, type: type, link: link, dataLength: dataLength,
                                     size: size) {
                return problem
            }
            passed(all)
            return nil
        }
    }

    /// Why `member`'s record is not what its header blocks at `blocks`
    /// say, as ``problem(blocks:through:contentEnd:path:type:link:dataLength:size:read:passed:)``,
    /// the member read to its end.
    package static func problem<Failure: Error>(
        blocks: Range<Int>, of member: MemberIndex.Member, contentEnd: Int,
        read: (Range<Int>) throws(Failure) -> [UInt8]
    ) throws(Failure) -> String? {
        try problem(blocks: blocks, through: member.end, contentEnd: contentEnd, path: member.path, type: member.type,
                    link: member.link, dataLength: member.dataLength, size: member.size, read: read)
    }
}
