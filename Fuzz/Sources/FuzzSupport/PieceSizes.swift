/// Piece sizes for a stream of `count` bytes: from the option byte, its low
/// 2 bits the kind (1 byte, up to 16, up to 4096, up to the whole stream),
/// the rest a seed. Shared by the targets that feed a stream in pieces.
public func pieceSizes(option: UInt8, count: Int) -> [Int] {
    var state = UInt64(option) &* 0x9E37_79B9_7F4A_7C15 | 1
    func next() -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(truncatingIfNeeded: state >> 1)
    }
    let most: Int
    switch option & 3 {
    case 0: most = 1
    case 1: most = 16
    case 2: most = 4096
    default: most = max(1, count)
    }
    var sizes: [Int] = []
    var covered = 0
    while covered < count {
        let size = 1 + next() % most
        sizes.append(size)
        covered += size
    }
    return sizes
}
