import Weir
import WeirPipeline

/// How `weir mount` reads an archive.
package struct MountOptions: Sendable {
    /// The decoded frames kept at most (`-M`).
    package var cacheBytes: Int
    /// The checksum check and the dictionary, as `weir -d` takes them.
    package var decompression: DecompressionOptions

    /// The cache's default: 24 MiB, three of weir's 8 MiB frames (the one
    /// read, the next one read ahead, one more), so that a mount of the
    /// default settings stays within 64 MiB resident with the tree of a
    /// large archive (docs/mount.md).
    package static let defaultCacheBytes = 24 << 20
    /// Whether the cache grows to three of the archive's largest frames
    /// when they are larger than a third of ``cacheBytes`` (the default,
    /// when `-M` is not given): a frame larger than half the cache is
    /// streamed from its start at every read (weir's frames are 32 MiB at
    /// -9 to -16, 64 MiB at -17 to -19). With `-M`, the cache is `-M`.
    package var cacheFitsFrames = false

    /// The progress of the decode that makes an index in memory (a tar
    /// without one): called with the archive's size when it starts, it
    /// returns the observer the decode feeds; `indexed` is called when the
    /// decode ends, however it ends. Nil: nothing shown.
    package var indexing: (@Sendable (Int) -> ProgressObserver)?
    package var indexed: (@Sendable () -> Void)?

    package init(cacheBytes: Int = defaultCacheBytes, decompression: DecompressionOptions = DecompressionOptions()) {
        self.cacheBytes = cacheBytes
        self.decompression = decompression
    }
}
