import CZstd
import Glibc
import WeirSystem

/// The old file of `--patch-from=OLD`, read whole into memory: the prefix a
/// patch's one frame is compressed against (`ZSTD_CCtx_refPrefix`) and
/// decoded against (`ZSTD_DCtx_refPrefix`). libzstd uses a prefix for the
/// next frame only, and reads it in place, so the bytes stay put for as long
/// as a context may refer to them (the contexts hold this reference).
public final class PatchReference: @unchecked Sendable, Equatable {  // bytes only read once made
    /// The file, as the user named it, for messages.
    public let path: String
    /// The bytes of the file, in one block of their own.
    let bytes: UnsafeMutableRawBufferPointer

    /// Reads `path` whole.
    ///
    /// - Throws: ``WeirError`` `.system` when it cannot be opened or read
    ///   (it is missing), `.notRegularFile` when it is not a regular file (a
    ///   directory).
    public init(path: String) throws(WeirError) {
        let operation = WeirError.Operation.readPatchReference
        let file = try Descriptor.openForReading(path, operation: operation)
        defer { file.close() }
        let status = try file.status(operation: operation)
        guard status.isRegularFile else { throw WeirError.notRegularFile(path: path, operation: operation, .failed) }
        // Read straight into a block of its own (one byte at least: libzstd
        // is given 0 bytes of an empty file), not through an array and a copy:
        // OLD is as large as the files patched.
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, status.size), alignment: 64)
        let count: Int
        do throws(WeirError) {
            count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: block[0 ..< status.size]), at: 0,
                                  operation: operation)
        } catch {
            block.deallocate()
            throw error
        }
        self.bytes = UnsafeMutableRawBufferPointer(rebasing: block[0 ..< count])
        self.path = path
        self.block = block
    }

    private let block: UnsafeMutableRawBufferPointer

    deinit { block.deallocate() }

    /// The size of the old file.
    public var count: Int { bytes.count }

    /// zstd's window for a patch of a new file of `size` bytes (nil: not
    /// known) against this one: one more than the highest bit of the larger
    /// of the two sizes, within libzstd's 10 … 31, so that every byte of
    /// the old file stays in reach (zstd's `FIO_adjustParamsForPatchFromMode`).
    public func windowLog(newSize size: Int?) -> Int {
        let largest = UInt64(max(1, count, size ?? 0))
        let highest = UInt64.bitWidth - 1 - largest.leadingZeroBitCount
        return max(10, min(31, highest + 1))
    }

    /// Whether zstd turns long-distance matching on for a patch at `level`
    /// with a window of `windowLog`: when the window is beyond what the
    /// level's match finder cycles through (its chain log, one less for the
    /// binary-tree strategies).
    public static func needsLongDistance(level: Int, windowLog: Int, newSize: Int?, oldSize: Int) -> Bool {
        let params = ZSTD_getCParams(Int32(clamping: level), UInt64(newSize ?? 0), oldSize)
        let cycleLog = Int(params.chainLog) - (params.strategy.rawValue >= ZSTD_btlazy2.rawValue ? 1 : 0)
        return windowLog > cycleLog
    }

    public static func == (left: PatchReference, right: PatchReference) -> Bool { left === right }
}
