import CFormats
import WeirSystem

/// The codes of the codec layer: zstd's frames, their data and checksums,
/// and the memory a frame needs.
extension WeirError.Kind {
    /// The input does not start with a zstd or skippable frame magic number.
    public static let notZstd = Self("notZstd")
    /// libzstd rejected the compressed data.
    public static let corrupt = Self("corrupt")
    /// A frame's content checksum does not match its content.
    public static let checksumMismatch = Self("checksumMismatch")
    /// A frame needs more memory than the budget allows.
    public static let memoryLimit = Self("memoryLimit")
    /// A frame just compressed does not decode to the input it was made
    /// from (`verify`): it was not written.
    public static let verificationFailed = Self("verificationFailed")
}

/// The factories of the errors that name the formats' own types (a
/// ``CompressedFormat``, a window's ``WindowLimit``, a dictionary): beside
/// the codecs that throw them, worded as ``WeirError``'s other factories.
extension WeirError {
    // MARK: corrupt

    /// A frame that needs another dictionary than `dictionary` (or one,
    /// when none was given), worded as zstd does ("Dictionary mismatch").
    package static func dictionaryMismatch(path: String, operation: Operation,
                                   dictionary: DecompressionDictionary?) -> WeirError {
        let detail = dictionary.map {
            "Dictionary mismatch: the data was compressed with another dictionary than \(FileName.displayed($0.path)) "
                + "(ID \($0.id))"
        } ?? "Dictionary mismatch: the data was compressed with a dictionary"
        return WeirError(.corrupt, path: path, operation: operation, lead: nil, detail: detail, hint: .dictionary)
    }

    // MARK: memoryLimit

    /// Frame `frame` at `offset` needs a window of `window` bytes, more than
    /// `limit` (the default limit, or one given); a window log above 31 is
    /// not supported, a smaller one comes with the hint of its limit.
    package static func memoryLimit(
        path: String, operation: Operation, window: UInt64, limit: UInt64, isDefaultLimit: Bool,
        frame: Int, offset: Int
    ) -> WeirError {
        let what = isDefaultLimit ? "the default memory limit" : "the memory limit"
        let log = WindowLimit.windowLog(window)
        let supported = log <= 31
        return WeirError(.memoryLimit, path: path, operation: operation, lead: nil,
                         detail: "needs a window of \(window) bytes, more than \(what) of \(limit) bytes"
                             + (supported ? "" : " (a window log above 31 is not supported)"),
                         placement: .leading, frame: frame, offset: offset,
                         hint: supported ? .windowLimit(log: log, bytes: window) : nil)
    }

    /// libzstd's refusal of a window larger than its limit (sizes unknown).
    package static func memoryLimit(path: String, operation: Operation) -> WeirError {
        WeirError(.memoryLimit, path: path, operation: operation, lead: nil,
                  detail: "frame needs a window larger than the memory limit", hint: .raiseWindowLimit)
    }

    // MARK: other formats (--format=, and reading them by magic)

    /// A member of another format that does not decode: `corrupt data:
    /// FORMAT: DETAIL (at input offset O)`, DETAIL being its library's
    /// words (zlib's message, liblz4's error name, xz's text).
    package static func formatCorrupt(_ format: CompressedFormat, path: String, operation: Operation, _ detail: String,
                              offset: Int) -> WeirError {
        WeirError(.corrupt, path: path, operation: operation, lead: .corruptData,
                  detail: "\(format.rawValue): \(detail) (at input offset \(offset))")
    }

    /// An input that ends at offset `end`, inside a frame (zstd's, lz4's) or
    /// member (gzip's, xz's, lzma's) of `format`: the one wording of that
    /// condition, whichever decoder finds it.
    package static func endsInside(
        _ format: CompressedFormat, path: String, operation: Operation, at end: Int
    ) -> WeirError {
        let unit = switch format {
        case .zstd: "a frame"
        case .gzip: "a gzip member"
        case .xz, .lzma: "an \(format.rawValue) member"
        case .lz4: "an lz4 frame"
        }
        return .truncated(path: path, operation: operation, "the input ends at offset \(end), inside \(unit)")
    }

    /// Bytes at `offset`, after a frame, that start no format weir reads.
    package static func unknownFrame(path: String, operation: Operation, offset: Int) -> WeirError {
        WeirError(.notZstd, path: path, operation: operation, lead: nil,
                  detail: "unknown frame format at input offset \(offset) (not zstd, gzip, xz, lzma or lz4)")
    }

    /// A library of another format failed while encoding: `FORMAT: DETAIL`.
    package static func formatLibrary(_ format: CompressedFormat, path: String, operation: Operation,
                              _ detail: String) -> WeirError {
        WeirError(.library, path: path, operation: operation, lead: .failed(operation),
                  detail: "\(format.rawValue): \(detail)")
    }

    /// liblzma's `code`, in xz's own words (its message.c).
    package static func lzma(_ code: lzma_ret, _ format: CompressedFormat, path: String, operation: Operation,
                     offset: Int = 0) -> WeirError {
        let text = switch code {
        case LZMA_MEM_ERROR: "cannot allocate memory"
        case LZMA_MEMLIMIT_ERROR: "memory usage limit reached"
        case LZMA_FORMAT_ERROR: "file format not recognized"
        case LZMA_OPTIONS_ERROR: "unsupported options"
        case LZMA_DATA_ERROR: "compressed data is corrupt"
        case LZMA_BUF_ERROR: "unexpected end of input"
        default: "internal error (liblzma code \(code.rawValue))"
        }
        if code == LZMA_MEMLIMIT_ERROR {
            return WeirError(.memoryLimit, path: path, operation: operation, lead: nil,
                             detail: "\(format.rawValue): \(text)", hint: .raiseWindowLimit)
        }
        if operation == .compress || code == LZMA_MEM_ERROR {
            return formatLibrary(format, path: path, operation: operation, text)
        }
        return formatCorrupt(format, path: path, operation: operation, text, offset: offset)
    }
}

/// The factories of the codec layer's codes.
extension WeirError {
    // MARK: notZstd

    /// `not in zstd format`, with `note` in parentheses after it.
    package static func notZstd(path: String, operation: Operation, _ note: String? = nil) -> WeirError {
        WeirError(.notZstd, path: path, operation: operation, lead: nil,
                  detail: "not in zstd format" + (note.map { " (\($0))" } ?? ""))
    }

    // MARK: corrupt

    /// `corrupt data: DETAIL`, or `corrupt data: frame N at offset O DETAIL`
    /// when the frame is known.
    package static func corrupt(path: String, operation: Operation, _ detail: String,
                        frame: Int? = nil, offset: Int? = nil) -> WeirError {
        WeirError(.corrupt, path: path, operation: operation, lead: .corruptData, detail: detail,
                  placement: .leading, frame: frame, offset: offset)
    }

    /// `corrupt seek table: DETAIL`; `cause` is the error the detail comes
    /// from, when there is one (the table's read error).
    package static func corruptSeekTable(path: String, operation: Operation = .readSeekTable, _ detail: String,
                                 cause: WeirError? = nil) -> WeirError {
        WeirError(.corrupt, path: path, operation: operation, lead: .corruptSeekTable, detail: detail, cause: cause)
    }

    /// A frame that decoded to `decoded` bytes of content where the index
    /// lists `listed` (`source`: "its seek table entry lists" when the size
    /// is the table's alone); `suffix` ends the detail ("; not indexed").
    package static func indexMismatch(path: String, operation: Operation, frame: Int, offset: Int, decoded: Int,
                              listed: Int, source: String = "its seek table entry lists",
                              suffix: String = "") -> WeirError {
        corruptSeekTable(path: path, operation: operation,
                         "frame \(frame) at offset \(offset) decodes to \(decoded) bytes of content, but "
                             + "\(source) \(listed)\(suffix)")
    }

    // MARK: verificationFailed

    /// `verify failed: frame N (input offset O) does not decode to its input`,
    /// then where the first byte differs, or the decoder's error as the cause.
    package static func verificationFailed(path: String, frame: Int, offset: Int, at difference: Int?,
                                   cause: WeirError? = nil) -> WeirError {
        var detail = "frame \(frame) (input offset \(offset)) does not decode to its input"
        if let difference { detail += ": the first byte that differs is at input offset \(difference)" }
        if let cause { detail += ": \(cause.reason)" }
        return WeirError(.verificationFailed, path: path, operation: .verify, lead: .failed(.verify), detail: detail,
                         frame: frame, offset: offset, cause: cause)
    }

    // MARK: checksumMismatch

    /// A frame whose content does not match its checksum.
    package static func checksumMismatch(path: String, operation: Operation) -> WeirError {
        WeirError(.checksumMismatch, path: path, operation: operation, lead: nil,
                  detail: "checksum mismatch: the decompressed data is corrupt")
    }

    // MARK: memoryLimit

    /// Compressing needs at least `needed` bytes, more than the process's
    /// memory `limit`, with frames of `frame` bytes; `fitting`: the window
    /// log that would fit, if any (``CompressionMemory``).
    package static func compressionMemory(path: String, needed: Int, limit: Int, frame: Int, fitting: Int?) -> WeirError
    {
        WeirError(.memoryLimit, path: path, operation: .compress, lead: nil,
                  detail: "needs at least \(mebibytes(needed)) MiB to compress (frames of \(mebibytes(frame)) MiB), "
                      + "more than this process's memory limit of \(mebibytes(limit)) MiB",
                  hint: .compressionMemory(longWindowLog: fitting))
    }

    /// `bytes` in whole MiB, rounded up (at least 1).
    private static func mebibytes(_ bytes: Int) -> Int {
        max(1, (bytes + (1 << 20) - 1) >> 20)
    }
}
