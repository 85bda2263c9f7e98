import Dispatch
import Glibc
import WeirFormats
import WeirSystem

/// Decodes the leading run of weir's own gzip members of a whole mapped
/// file in parallel: each member's header gives its size (``GzipMember``)
/// and its trailer its content's size, so members are found without
/// inflating them and each is inflated whole by libdeflate on a worker,
/// into a buffer of exactly its size. What follows the run (another
/// tool's member, another format) is left to ``OtherFormatStream``'s serial decoder.
///
/// The `Wr` field is a hint, never the truth: a member counts when
/// libdeflate ends it exactly at the field's size with its CRC and ISIZE
/// right there (and the next member of the run starts there). Otherwise it
/// is inflated as gzip reads it, from its start to wherever it ends, and
/// the run stops after it: the serial decoder reads on from its real end.
/// One that does not inflate at all is damage: the run is cut before it.
///
/// Bound and threads: ``WholeMemberDecoder``'s; a member whose ISIZE is above
/// its `frameLimit` ends the run, and one whose real content is (found
/// inflating it) is left to the serial decoder.
struct GzipMemberScan {
    /// The run's parallel decoding of members, with its session and workers.
    let members: WholeMemberDecoder
    let operation: WeirError.Operation

    /// Queues every member of the run of weir members that starts `data`
    /// (one region, the whole file); returns the bytes they take and the
    /// next output number in `sequence`. Zero bytes when `data` does not start with one.
    func decode(_ data: DispatchData, region: UnsafeRawBufferPointer,
                sequence: inout Int) throws(WeirError) -> Int {
        guard members.isParallel, GzipMember.recordedSize(region) != nil else { return 0 }
        // The run's members first (their headers and trailers only).
        var found: [WholeMemberDecoder.Member] = []
        var offset = 0
        while let size = GzipMember.recordedSize(UnsafeRawBufferPointer(rebasing: region[offset...])),
              size <= region.count - offset {
            let trailer = offset + size - 4
            let content = (0..<4).reduce(0) { $0 | Int(region[trailer + $1]) << (8 * $1) }
            guard content <= members.frameLimit else { break }
            found.append((offset, size, content))
            offset += size
        }
        let (path, operation, frameLimit) = (members.path, self.operation, members.frameLimit)
        return try members.decode(
            found, in: data, region: region, sequence: &sequence
        ) { worker, rest, member, output in
            let inflation: WholeMemberCodec.Inflation
            do throws(WeirError) {
                inflation = try worker.members.inflateGzip(
                    UnsafeRawBufferPointer(rebasing: rest[..<member.size]), into: output, capacity: member.content)
            } catch { return .failed(error) }
            if case .inflated(member.size, member.content) = inflation { return .confirmed }
            // Not where the field says: the member as gzip reads it.
            return Self.wholeMember(rest, with: worker.members, from: max(member.content, 1 << 16),
                                    limit: frameLimit) {
                .formatCorrupt(
                    .gzip, path: path, operation: operation, "the member does not inflate to its size and CRC",
                    offset: member.start)
            }
        }
    }

    /// The gzip member that starts `rest`, inflated whatever its stated
    /// size: `.resized` with its content and real size; `.serial` when its
    /// content is above `limit` bytes; `.failed` (`damage()`) when it does
    /// not inflate. The output buffer starts at `capacity` bytes and doubles.
    static func wholeMember(_ rest: UnsafeRawBufferPointer, with codec: WholeMemberCodec, from capacity: Int,
                            limit: Int, damage: () -> WeirError) -> WholeMemberDecoder.Outcome {
        var capacity = min(capacity, max(limit, 1))
        while true {
            guard let buffer = malloc(max(1, capacity)) else { return .serial }
            let inflation: WholeMemberCodec.Inflation
            do throws(WeirError) {
                inflation = try codec.inflateGzip(rest, into: buffer, capacity: capacity)
            } catch {
                free(buffer)
                return .failed(error)
            }
            if case .inflated(let consumed, let produced) = inflation {
                // A custom deallocator: `.free` crashes here (swift_retain in a worker, Swift 6.3).
                nonisolated(unsafe) let owned = buffer
                let content = DispatchData(bytesNoCopy: UnsafeRawBufferPointer(start: buffer, count: produced),
                                           deallocator: .custom(nil, { free(owned) }))
                return .resized(content, size: consumed)
            }
            free(buffer)
            guard case .outputTooSmall = inflation else { return .failed(damage()) }
            guard capacity < limit else { return .serial }
            capacity = min(limit, capacity * 2)
        }
    }
}
