/// The one byte buffer a ``MountTree``'s names and link targets are ranges
/// of: the building's own buffer, handed over as it stands rather than
/// copied into an array (a copy of every member's name, at mount).
final class MountBytes: @unchecked Sendable {  // never written once made; freed only by deinit
    private let base: UnsafeMutablePointer<UInt8>
    let count: Int

    /// Takes `base`, allocated for at least `count` bytes, to free it.
    init(taking base: UnsafeMutablePointer<UInt8>, count: Int) {
        (self.base, self.count) = (base, count)
    }

    /// A copy of `bytes`.
    convenience init(_ bytes: [UInt8]) {
        let base = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bytes.count))
        bytes.withUnsafeBufferPointer { if let source = $0.baseAddress { base.update(from: source, count: $0.count) } }
        self.init(taking: base, count: bytes.count)
    }

    deinit { base.deallocate() }

    /// All the bytes, valid while this lives.
    var all: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// A copy of the bytes at `range`.
    subscript(range: Range<Int>) -> [UInt8] {
        withExtendedLifetime(self) { Array(all[range]) }
    }
}
