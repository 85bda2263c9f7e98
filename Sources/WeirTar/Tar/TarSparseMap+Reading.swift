/// A sparse member's map as every reader reads it (`TarArchive.contents`
/// in the engine, `weir mount`): from what its header blocks say
/// (``parse(header:)``), a pax 1.0 map read from its data's start, then the
/// map held to the member: its size, and segments within its stored data.
/// Written once here; each reader words the problems its own way.
extension TarSparseMap {
    /// Why a sparse member's map is not read (``read(_:size:dataLength:data:)``).
    package enum Problem: Error, Equatable {
        /// The header blocks' map cannot be read (``Found/damaged(_:)``): why.
        case damaged(String)
        /// The map at the data's start cannot be read: why.
        case dataMapDamaged(String)
        /// The map at the data's start runs past the data.
        case dataMapPastData
        /// The map's size (`map`) is not the member's.
        case sizeDiffers(map: Int)
        /// The segments take `stored` bytes, more than the data holds past
        /// the map's `mapLength`.
        case segmentsPastData(stored: Int, mapLength: Int)
    }

    /// The map of a member of `size` bytes and `dataLength` bytes of data,
    /// from `found` (its header blocks'), and where its segments' bytes
    /// begin in its data (past a pax 1.0 map there); nil for a member that
    /// is not sparse. A map at the data's start is read from `data`, which
    /// gives the data's first `count` bytes: a block first, then four times
    /// more while the map goes on (a map of a few segments takes one).
    ///
    /// - Throws: what `data` throws.
    package static func read<Failure: Error>(
        _ found: Found, size: Int, dataLength: Int, data: (_ count: Int) throws(Failure) -> [UInt8]
    ) throws(Failure) -> Result<(map: TarSparseMap, mapLength: Int)?, Problem> {
        var map: TarSparseMap
        var length = 0
        switch found {
        case .notSparse: return .success(nil)
        case let .damaged(why): return .failure(.damaged(why))
        case let .map(whole): map = whole
        case let .mapInData(mapSize):
            var count = min(dataLength, TarHeaderCheck.block)
            while true {
                let bytes = try data(count)
                switch bytes.withUnsafeBytes({ inData($0, size: mapSize) }) {
                case let .map(found, mapLength):
                    (map, length) = (found, mapLength)
                case .needsMore where count < dataLength:
                    count = min(dataLength, count * 4)
                    continue
                case .needsMore: return .failure(.dataMapPastData)
                case let .damaged(why): return .failure(.dataMapDamaged(why))
                }
                break
            }
        }
        guard map.size == size else { return .failure(.sizeDiffers(map: map.size)) }
        guard length + map.storedLength <= dataLength else {
            return .failure(.segmentsPastData(stored: map.storedLength, mapLength: length))
        }
        return .success((map, length))
    }
}
