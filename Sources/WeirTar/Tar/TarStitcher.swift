import WeirSystem

/// Puts the chunks' walks (``TarSegment``) together, in content order,
/// into the member index of a file compressed from a mapping: what one
/// walk of the whole content gives (``TarScanner``), byte for byte.
///
/// A segment whose walk began where the next member's header lies (the
/// ``resume`` of the walk so far) is kept as it is: its members, coded in
/// columns by its worker, are joined to the column writer's
/// (``MemberIndex/ColumnWriter/join(_:)``: the first coded again against
/// the member before, the rest copied a column at a time), not handed
/// over one by one.
/// Any other is walked again from ``resume`` by ``TarSegment/walk(upTo:read:)``,
/// reading the blocks it needs from the input file; a chunk that lies
/// inside one member's data (``resume`` past its end) holds nothing.
///
/// The scan never fails the compression: a walk that ends as a tar does
/// not (a checksum that fails, a tar cut short) gives no index, as the
/// scanner's.
///
/// Threads: one at a time (the compression's workers, in turn, then the
/// thread that ends the run).
package final class TarStitcher: @unchecked Sendable {  // one thread at a time, in turn (above)
    private let writer: MemberIndex.ColumnWriter
    /// Where the next member's header blocks begin.
    package private(set) var resume: Int
    /// Where the walk stopped, and whether as a tar ends; nil while it goes on.
    package private(set) var stop: (offset: Int, clean: Bool)?

    /// A stitcher whose index is compressed at `level`
    /// (``MemberIndex/level(forRunLevel:)``), its blocks closed at
    /// `blockBytes` (``MemberIndex/blockBytes``: the tests' are smaller), for
    /// a tar from its start.
    package init(level: Int = 3, blockBytes: Int = MemberIndex.blockBytes) {
        writer = MemberIndex.ColumnWriter(level: level, blockBytes: blockBytes)
        resume = 0
    }

    /// Whether the walk still wants segments.
    package var isWalking: Bool { stop == nil }

    /// Takes `segment`, the next chunk's (ended: ``TarSegment/end()``);
    /// walks it again from the input when its walk began elsewhere than
    /// ``resume``: `read(offset, buffer)` reads the input's bytes at
    /// `offset` into `buffer`.
    ///
    /// - Throws: what `read` throws (the walk cannot go on: no index).
    package func take(_ segment: TarSegment,
                      read: (Int, UnsafeMutableRawBufferPointer) throws(WeirError) -> Int) throws(WeirError) {
        guard stop == nil else { return }
        var kept = segment
        if segment.start != resume {
            // Inside one member's data: no header in the chunk.
            guard resume < segment.chunkEnd else { return }
            kept = TarSegment(chunkStart: segment.chunkStart, chunkEnd: segment.chunkEnd, start: resume)
            try kept.walk(upTo: segment.chunkEnd, read: read)
            kept.end()
        }
        keep(kept)
    }

    /// Takes `segment`, whose walk began at ``resume``.
    private func keep(_ segment: TarSegment) {
        writer.join(segment.members)
        resume = segment.resume
        stop = segment.stop
    }

    /// The index of a content of `contentSize` bytes, once every chunk's
    /// segment was taken; nil when it is not a whole tar (no member, a tar
    /// cut short, a stream that stopped being tar), as
    /// ``TarScanner/finish(contentSize:path:)``.
    ///
    /// - Throws: ``WeirError`` `.library` when libzstd fails (`path` the output's name).
    package func finish(contentSize: Int, path: String) throws(WeirError) -> TarScanner.Found? {
        guard let stop, stop.clean, writer.count > 0 else { return nil }
        let frame = try writer.frame(endedEarly: false, endOffset: min(stop.offset, contentSize),
                                     contentSize: contentSize, path: path)
        return TarScanner.Found(frame: frame, members: writer.count)
    }
}
