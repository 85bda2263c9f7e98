import WeirSystem

/// The largest window a frame may use when it is decoded (`-M`), judged on
/// each frame's header before any of its bytes reach libzstd.
///
/// libzstd's own limit (`ZSTD_d_windowLogMax`) does not cover every frame:
/// `ZSTD_decompressDCtx` (a frame decoded whole) never checks it, and
/// `ZSTD_decompressStream` skips it when a frame and its whole content fit
/// the buffers it is given (it then decodes in one pass). So the pipelines
/// check every frame here, exactly as zstd words the rule: Window_Size (for a
/// single-segment frame, its content size), at least 1 KiB, must not exceed
/// the limit. The context's window log is then only a backstop, set to the
/// power of two at or above the limit so that it never refuses a frame this
/// check lets through.
package struct WindowLimit: Sendable, Equatable {
    /// libzstd's limit when none is given: 2²⁷ (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`).
    package static let defaultBytes: UInt64 = 1 << 27
    /// The smallest window of the format (`ZSTD_WINDOWLOG_ABSOLUTEMIN`): every
    /// frame is allowed at least this much, as libzstd allows it.
    static let minimumBytes: UInt64 = 1 << 10

    /// The largest window allowed, in bytes.
    let bytes: UInt64
    /// Whether no limit was given (the default applies).
    let isDefault: Bool

    /// The limit for a memory budget in bytes; else 2^`longWindowLog`
    /// (`--long=N`, as zstd: `-M` wins); else libzstd's default.
    package init(memoryLimit: Int?, longWindowLog: Int? = nil) {
        if let memoryLimit {
            bytes = max(UInt64(max(0, memoryLimit)), Self.minimumBytes)
            isDefault = false
        } else if let longWindowLog {
            bytes = UInt64(1) << UInt64(min(max(longWindowLog, 10), 31))
            isDefault = false
        } else {
            bytes = Self.defaultBytes
            isDefault = true
        }
    }

    /// The value for `ZSTD_d_windowLogMax`: the smallest power of two at or
    /// above ``bytes`` (at most 31, libzstd's largest on 64-bit systems).
    package var logMax: Int {
        var log = 10
        while log < 31 && UInt64(1) << UInt64(log) < bytes { log += 1 }
        return log
    }

    /// Refuses a frame whose header asks for a larger window.
    ///
    /// - Parameters:
    ///   - header: the frame's header, as ``FrameScanner`` read it.
    ///   - index: the frame's position in the stream, for the message.
    ///   - offset: the stream offset of its first byte, for the message.
    ///   - path: how the error names the input.
    /// - Throws: ``WeirError`` `.memoryLimit`, with zstd's hint: the
    ///   `--long=N` or the `-M` that would do.
    package func check(_ header: FrameHeader, index: Int, offset: Int, path: String) throws(WeirError) {
        guard !header.isSkippable, header.windowSize > bytes else { return }
        throw WeirError.memoryLimit(path: path, operation: .decompress, window: header.windowSize, limit: bytes,
                                    isDefaultLimit: isDefault, frame: index, offset: offset)
    }

    /// The smallest N with 2^N ≥ `bytes` (zstd's `--long=N` hint).
    static func windowLog(_ bytes: UInt64) -> Int {
        var log = 0
        while log < 64 && UInt64(1) << UInt64(log) < bytes { log += 1 }
        return log
    }
}
