/// The formats Debian's zstd 1.5.4 reads and writes (`--format=`), and how
/// each is told from the first bytes of a frame, as zstd's
/// `FIO_decompressFrames` tells them: by magic number, frame after frame.
package enum CompressedFormat: String, Sendable, CaseIterable {
    case zstd, gzip, xz, lzma, lz4

    /// The suffix a compressed file gets (zstd's `*_EXTENSION`).
    package var suffix: String {
        switch self {
        case .zstd: ".zst"
        case .gzip: ".gz"
        case .xz: ".xz"
        case .lzma: ".lzma"
        case .lz4: ".lz4"
        }
    }

    /// The bytes that must be seen before ``detect(_:)`` can decide.
    package static let magicLength = 4

    /// The format whose frame starts `bytes`, or nil when none does (or
    /// fewer bytes than it needs are given). zstd's own checks: gzip's
    /// 1f 8b, xz's fd 37, the legacy .lzma's properties byte 5d then 00
    /// (it has no magic number), lz4's 04 22 4d 18, zstd's and skippable
    /// frames' magic numbers.
    package static func detect(_ bytes: some Collection<UInt8>) -> CompressedFormat? {
        let head = Array(bytes.prefix(magicLength))
        guard head.count >= 2 else { return nil }
        switch (head[0], head[1]) {
        case (0x1f, 0x8b): return .gzip
        case (0xfd, 0x37): return .xz
        case (0x5d, 0x00): return .lzma
        default: break
        }
        guard head.count == 4 else { return nil }
        if head == [0x04, 0x22, 0x4d, 0x18] { return .lz4 }
        return FrameHeader.startsFrame(head) ? .zstd : nil
    }
}
