import CZstd
import WeirSystem

/// Facts about the libzstd in use, and the mapping of its errors to ``WeirError``.
package enum Zstd {
    /// The largest window log libzstd accepts on 64-bit systems
    /// (`ZSTD_WINDOWLOG_MAX_64`): the top of `--long`'s range.
    package static let windowLogMax = 31

    /// The version of the libzstd the process loaded, such as `1.5.4`.
    package static var libraryVersion: String { String(cString: ZSTD_versionString()) }

    /// The version of the libzstd header weir was compiled against, such as
    /// `1.5.4`.
    package static var headerVersion: String {
        let number = Int(weir_zstd_header_version())
        return "\(number / 10000).\(number / 100 % 100).\(number % 100)"
    }

    /// Whether the loaded libzstd is the version of the header: weir uses
    /// libzstd's advanced API (ZSTD_STATIC_LINKING_ONLY), whose structures
    /// and parameters are fixed only within one version.
    package static var isHeaderVersion: Bool { ZSTD_versionNumber() == weir_zstd_header_version() }

    /// Refuses to work with a libzstd of another version than the header's.
    ///
    /// - Throws: ``WeirError`` `.library` naming both versions.
    package static func checkLibraryVersion(path: String, operation: WeirError.Operation) throws(WeirError) {
        guard isHeaderVersion else {
            throw WeirError.library(path: path, operation: operation,
                                    "libzstd \(libraryVersion) is loaded, but weir was built with the header of "
                                        + "libzstd \(headerVersion): install the matching libzstd or rebuild weir")
        }
    }

    /// The lowest level (the fastest of `--fast`).
    package static var minLevel: Int { Int(ZSTD_minCLevel()) }

    /// The highest level (`--ultra -22`).
    package static var maxLevel: Int { Int(ZSTD_maxCLevel()) }

    /// The default level, 3.
    package static var defaultLevel: Int { Int(ZSTD_defaultCLevel()) }

    /// The largest compressed size of `size` input bytes as one frame.
    package static func compressBound(_ size: Int) -> Int { ZSTD_compressBound(size) }

    /// Throws the ``WeirError`` matching a libzstd return code that is an error.
    ///
    /// - Parameters:
    ///   - code: a value returned by a libzstd function.
    ///   - path: the file being processed, for the message.
    ///   - operation: what was being done, for the message.
    /// - Returns: `code`, when it is not an error.
    @discardableResult
    package static func check(_ code: Int, path: String, operation: WeirError.Operation) throws(WeirError) -> Int {
        guard ZSTD_isError(code) != 0 else { return code }
        throw error(code, path: path, operation: operation)
    }

    /// The ``WeirError`` for a libzstd error code.
    static func error(_ code: Int, path: String, operation: WeirError.Operation) -> WeirError {
        let name = String(cString: ZSTD_getErrorName(code))
        switch ZSTD_getErrorCode(code) {
        case ZSTD_error_prefix_unknown:
            return .notZstd(path: path, operation: operation)
        case ZSTD_error_checksum_wrong:
            return .checksumMismatch(path: path, operation: operation)
        case ZSTD_error_frameParameter_windowTooLarge:
            return .memoryLimit(path: path, operation: operation)
        case ZSTD_error_memory_allocation:
            return .outOfMemory(path: path, operation: operation)
        case ZSTD_error_corruption_detected, ZSTD_error_srcSize_wrong,
             ZSTD_error_frameParameter_unsupported, ZSTD_error_dictionary_wrong,
             ZSTD_error_literals_headerWrong, ZSTD_error_dictionaryCreation_failed:
            return .corrupt(path: path, operation: operation, name)
        default:
            return .library(path: path, operation: operation, failed: name)
        }
    }
}
