import Dispatch
import WeirSystem

/// Cuts a stream into chunks at content-defined boundaries (`--rsyncable`),
/// so that an insertion or deletion changes only the frames around it: the
/// next boundary after the change falls on the same content as before, and
/// every frame after it is byte-identical, which rsync and deduplicating
/// backups see as unchanged.
///
/// A boundary is where a gear hash of the last 64 bytes has its top `bits`
/// bits all zero, searched from `minimum` bytes into the chunk: chunks are
/// at least half the chunk size, on average the chunk size, and cut by
/// force at twice it (about one in twenty), so a chunk and its frame buffer
/// can be twice ``CompressionOptions/chunkSize``. Owned by the reading thread.
struct RsyncableChunker {
    let minimum: Int
    let maximum: Int
    /// The top `bits` bits of the hash: a boundary, after `minimum`, every
    /// 2^bits bytes on average.
    private let mask: UInt64
    /// Bytes read but not yet cut into a chunk.
    private var pending = DispatchData.empty
    private var ended = false

    /// For chunks of `chunkSize` bytes on average.
    init(chunkSize: Int) {
        minimum = max(1, chunkSize / 2)
        maximum = max(2, 2 * chunkSize)
        let bits = max(1, Int.bitWidth - 1 - max(1, chunkSize / 2).leadingZeroBitCount)
        mask = ~UInt64(0) << UInt64(64 - bits)
    }

    /// The next chunk and whether it is the last, reading with `read(length)`
    /// as much as it needs (a read returns fewer bytes only at the end).
    mutating func next(_ read: (Int) throws(WeirError) -> (data: DispatchData, endOfInput: Bool))
        throws(WeirError) -> (data: DispatchData, endOfInput: Bool) {
        if !ended && pending.count < maximum {
            let more = try read(maximum - pending.count)
            pending.append(more.data)
            ended = more.endOfInput
        }
        let cut = boundary(in: pending) ?? min(pending.count, maximum)
        let chunk = pending.subdata(in: 0 ..< cut)
        pending = pending.subdata(in: cut ..< pending.count)
        return (chunk, ended && pending.isEmpty)
    }

    /// The end of the first chunk in `data`: just after the first byte from
    /// `minimum` on where the hash has its boundary, before `maximum`.
    func boundary(in data: DispatchData) -> Int? {
        let end = min(data.count, maximum - 1)
        guard end > minimum else { return nil }
        // The hash of a position depends only on the 64 bytes before it.
        let start = max(0, minimum - 64)
        var hash: UInt64 = 0
        var found: Int?
        let table = Self.gear
        let mask = self.mask
        let minimum = self.minimum
        data.enumerateBytes { region, offset, stop in
            let from = max(start, offset), to = min(end, offset + region.count)
            guard from < to else {
                if offset >= end { stop = true }
                return
            }
            table.withUnsafeBufferPointer { gear in
                var position = from
                while position < to {
                    hash = (hash << 1) &+ gear[Int(region[position - offset])]
                    position += 1
                    if hash & mask == 0 && position > minimum {
                        found = position
                        break
                    }
                }
            }
            if found != nil || to == end { stop = true }
        }
        return found
    }

    /// 256 fixed random 64-bit values (SplitMix64 from a fixed seed): the
    /// same boundaries in every run and every version.
    static let gear: [UInt64] = {
        var state: UInt64 = 0x7765_6972_7273_796E
        return (0 ..< 256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()
}
