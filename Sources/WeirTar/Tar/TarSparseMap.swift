/// Where a sparse member's stored data lies in the file it stands for, as
/// GNU tar wrote it and `tar x` reads it: the file is `size` bytes, zeros
/// but for its segments, whose bytes the member stores one after another,
/// in order. The formats:
/// - GNU's old `S` header: four (offset, length) entries in the header at
///   386, more in extension blocks (21 each) while byte 482 (then 504) is
///   set; the real size at 483;
/// - pax 0.0: `GNU.sparse.offset` and `GNU.sparse.numbytes` records, one
///   pair per segment, in order; the size in `GNU.sparse.size`;
/// - pax 0.1: `GNU.sparse.map` (`offset,length,…`) and `GNU.sparse.size`;
/// - pax 1.0 (`GNU.sparse.major=1`): the map begins the member's data as
///   decimal lines (the count, then offset and length of each segment),
///   padded to a 512-byte block; the size in `GNU.sparse.realsize`.
///
/// A pure value: it parses bytes it is given and maps offsets, nothing more.
package struct TarSparseMap: Sendable, Equatable {
    /// One run of data in the file: its offset and length there.
    package struct Segment: Sendable, Equatable {
        package var offset: Int
        package var length: Int

        package init(offset: Int, length: Int) {
            (self.offset, self.length) = (offset, length)
        }
    }

    /// What the member's header blocks say of its sparseness.
    package enum Found: Sendable, Equatable {
        /// Not a sparse member: its data is its contents.
        case notSparse
        /// The map, whole from the header blocks.
        case map(TarSparseMap)
        /// A pax 1.0 member whose map begins its data: read it with ``inData(_:size:)``.
        case mapInData(size: Int)
        /// A sparse member whose map cannot be read: why.
        case damaged(String)
    }

    /// What ``inData(_:size:)`` made of the bytes it was given.
    package enum DataMap: Sendable, Equatable {
        /// The map, and the bytes it takes at the data's start (whole blocks).
        case map(TarSparseMap, length: Int)
        /// The bytes end inside the map: give more.
        case needsMore
        case damaged(String)
    }

    /// The file's size, holes included.
    package let size: Int
    /// The segments, in the file's order (and the stored data's).
    package let segments: [Segment]
    /// Where each segment's bytes begin in the stored data (after a map there).
    private let storedStarts: [Int]
    /// The bytes of stored data the segments take.
    package var storedLength: Int { (storedStarts.last ?? 0) + (segments.last?.length ?? 0) }

    /// A map of `segments` in a file of `size` bytes; nil unless the
    /// segments are in order, apart, and within the file.
    package init?(size: Int, segments: [Segment]) {
        guard size >= 0 else { return nil }
        var starts: [Int] = []
        starts.reserveCapacity(segments.count)
        var fileEnd = 0, stored = 0
        for segment in segments {
            guard segment.offset >= fileEnd, segment.length >= 0, segment.length <= size,
                  segment.offset <= size - segment.length else { return nil }
            starts.append(stored)
            fileEnd = segment.offset + segment.length
            stored += segment.length
        }
        self.size = size
        self.segments = segments
        storedStarts = starts
    }

    /// A piece of a read: `count` bytes of the file at `offset`, held at
    /// `stored` in the stored data, or zeros (a hole) when `stored` is nil.
    package struct Piece: Sendable, Equatable {
        package var offset: Int
        package var count: Int
        package var stored: Int?
    }

    /// The pieces that make the file's bytes `range` (clipped to the
    /// file), in order, holes and data alternating.
    package func pieces(of range: Range<Int>) -> [Piece] {
        let end = min(range.upperBound, size)
        var at = max(0, range.lowerBound)
        var pieces: [Piece] = []
        // The first segment that ends past `at`.
        var low = 0, high = segments.count
        while low < high {
            let middle = (low + high) / 2
            if segments[middle].offset + segments[middle].length <= at { low = middle + 1 } else { high = middle }
        }
        var index = low
        while at < end {
            guard index < segments.count, segments[index].offset < end else {
                pieces.append(Piece(offset: at, count: end - at, stored: nil))
                break
            }
            let segment = segments[index]
            if at < segment.offset {
                pieces.append(Piece(offset: at, count: segment.offset - at, stored: nil))
                at = segment.offset
            }
            let take = min(end, segment.offset + segment.length) - at
            if take > 0 {
                pieces.append(Piece(offset: at, count: take, stored: storedStarts[index] + at - segment.offset))
                at += take
            }
            index += 1
        }
        return pieces
    }

    /// What the header blocks `header` (a member's, as the member index
    /// gives them: pax or GNU blocks, its own header, an `S` header's
    /// extension blocks, or a pax 1.0 map counted there) say of its
    /// sparseness. Whether the segments fit in the stored data is the
    /// caller's to check (``storedLength``).
    package static func parse(header: UnsafeRawBufferPointer) -> Found {
        let block = TarHeaderCheck.block
        guard header.count >= block, header.count % block == 0 else { return .notSparse }
        var at = 0
        var pax: [(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] = []
        while at + block <= header.count {
            let one = UnsafeRawBufferPointer(rebasing: header[at ..< at + block])
            let type = one[156]
            let extended = type == UInt8(ascii: "x") || type == UInt8(ascii: "L") || type == UInt8(ascii: "K")
                || type == UInt8(ascii: "g") || type == UInt8(ascii: "X")
            guard extended else {
                if type == UInt8(ascii: "S") { return gnu(header, at: at) }
                return paxMap(pax, after: UnsafeRawBufferPointer(rebasing: header[(at + block)...]))
            }
            guard let size = TarHeaderCheck.number(UnsafeRawBufferPointer(rebasing: one[124 ..< 136])),
                  at + block + size <= header.count else { return .notSparse }
            if type == UInt8(ascii: "x") || type == UInt8(ascii: "X") {
                pax += records(UnsafeRawBufferPointer(rebasing: header[at + block ..< at + block + size]))
            }
            at += block + (size + block - 1) / block * block
        }
        return .notSparse
    }

    /// A pax 1.0 map at the start of `data` (the member's data), for a file of `size` bytes.
    package static func inData(_ data: UnsafeRawBufferPointer, size: Int) -> DataMap {
        var at = 0
        var numbers: [Int] = []
        var count: Int?
        while count.map({ numbers.count < 2 * $0 }) ?? true {
            var value = 0, digits = 0
            while at < data.count, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(data[at]) {
                guard value <= (Int.max - 9) / 10 else { return .damaged("a number in its map is too large") }
                value = value * 10 + Int(data[at] - UInt8(ascii: "0"))
                digits += 1
                at += 1
            }
            guard at < data.count else { return .needsMore }
            guard digits > 0, data[at] == UInt8(ascii: "\n") else {
                return .damaged("its map (at the data's start) is not decimal lines")
            }
            at += 1
            if count == nil {
                // Each segment takes at least 4 bytes of map, which the stored data must hold.
                guard value <= Int.max / 4 else { return .damaged("its map counts \(value) segments") }
                count = value
            } else {
                numbers.append(value)
            }
        }
        let segments = stride(from: 0, to: numbers.count, by: 2).map { Segment(offset: numbers[$0],
                                                                              length: numbers[$0 + 1]) }
        guard let map = TarSparseMap(size: size, segments: segments) else {
            return .damaged("its map's segments are out of order or past its size \(size)")
        }
        return .map(map, length: (at + TarHeaderCheck.block - 1) / TarHeaderCheck.block * TarHeaderCheck.block)
    }

    /// The old GNU `S` header at `at` and its extension blocks after it.
    private static func gnu(_ header: UnsafeRawBufferPointer, at: Int) -> Found {
        let block = TarHeaderCheck.block
        guard let size = TarHeaderCheck.number(UnsafeRawBufferPointer(rebasing: header[at + 483 ..< at + 495])) else {
            return .damaged("its GNU sparse header has no valid real size")
        }
        var segments: [Segment] = []
        // Reads up to `count` entries at `start`; false at an empty entry (the list's end).
        func entries(_ start: Int, _ count: Int) -> Bool? {
            for index in 0 ..< count {
                let entry = start + index * 24
                guard header[entry] != 0 else { return false }
                let fields = (UnsafeRawBufferPointer(rebasing: header[entry ..< entry + 12]),
                              UnsafeRawBufferPointer(rebasing: header[entry + 12 ..< entry + 24]))
                guard let offset = TarHeaderCheck.number(fields.0), let length = TarHeaderCheck.number(fields.1) else {
                    return nil
                }
                segments.append(Segment(offset: offset, length: length))
            }
            return true
        }
        guard let more = entries(at + 386, 4) else { return .damaged("its GNU sparse header's map is not numbers") }
        var extended = more && header[at + 482] != 0
        var next = at + block
        while extended {
            guard next + block <= header.count else {
                return .damaged("its GNU sparse header's extension blocks are not among its header blocks")
            }
            guard let more = entries(next, 21) else { return .damaged("a GNU sparse extension block is not numbers") }
            extended = more && header[next + 504] != 0
            next += block
        }
        guard let map = TarSparseMap(size: size, segments: segments) else {
            return .damaged("its GNU sparse map's segments are out of order or past its size \(size)")
        }
        return .map(map)
    }

    /// The pax formats, from the member's pax records; `after` is what the
    /// header blocks hold past the member's own header (a 1.0 map, when
    /// the index counts it there).
    private static func paxMap(_ pax: [(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)],
                               after: UnsafeRawBufferPointer) -> Found {
        func value(_ key: String) -> ArraySlice<UInt8>? { pax.last { $0.key.elementsEqual(key.utf8) }?.value }
        func number(_ text: ArraySlice<UInt8>?) -> Int? {
            guard let text, !text.isEmpty, text.count < 19,
                  text.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }) else { return nil }
            return Int(String(decoding: text, as: UTF8.self))
        }
        if value("GNU.sparse.major").map({ $0.elementsEqual("1".utf8) }) == true {
            guard let size = number(value("GNU.sparse.realsize")) else {
                return .damaged("its pax GNU.sparse.realsize is not a size")
            }
            guard !after.isEmpty else { return .mapInData(size: size) }
            switch inData(after, size: size) {
            case let .map(map, _): return .map(map)
            case .needsMore: return .damaged("its map runs past the header blocks the index lists")
            case let .damaged(why): return .damaged(why)
            }
        }
        guard let sizeText = value("GNU.sparse.size") ?? value("GNU.sparse.realsize") else { return .notSparse }
        guard let size = number(sizeText) else { return .damaged("its pax GNU.sparse.size is not a size") }
        var numbers: [Int] = []
        if let map = value("GNU.sparse.map") {
            // 0.1: offset,length,… in one record.
            for field in map.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                guard let one = number(field) else { return .damaged("its pax GNU.sparse.map is not numbers") }
                numbers.append(one)
            }
        } else {
            // 0.0: the records in turn, each offset followed by its length.
            for record in pax where record.key.elementsEqual("GNU.sparse.offset".utf8)
                || record.key.elementsEqual("GNU.sparse.numbytes".utf8) {
                let isOffset = record.key.elementsEqual("GNU.sparse.offset".utf8)
                guard isOffset == numbers.count.isMultiple(of: 2), let one = number(record.value) else {
                    return .damaged("its pax GNU.sparse.offset and numbytes records do not pair")
                }
                numbers.append(one)
            }
        }
        guard numbers.count.isMultiple(of: 2) else { return .damaged("its pax sparse map has an odd count") }
        let segments = stride(from: 0, to: numbers.count, by: 2).map { Segment(offset: numbers[$0],
                                                                              length: numbers[$0 + 1]) }
        guard let map = TarSparseMap(size: size, segments: segments) else {
            return .damaged("its pax sparse map's segments are out of order or past its size \(size)")
        }
        return .map(map)
    }

    /// The records of a pax record block, in order (`LENGTH KEY=VALUE\n`);
    /// they end at the first that is not one.
    private static func records(_ data: UnsafeRawBufferPointer)
        -> [(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        let bytes = Array(data)
        var found: [(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] = []
        var at = 0
        while at < bytes.count {
            var length = 0, index = at
            while index < bytes.count, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(bytes[index]),
                  length <= bytes.count {
                length = length * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: " "), length > index - at,
                  at + length <= bytes.count, bytes[at + length - 1] == UInt8(ascii: "\n") else { break }
            let record = bytes[(index + 1) ..< (at + length - 1)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")) {
                found.append((record[..<equals], record[(equals + 1)...]))
            }
            at += length
        }
        return found
    }
}
