import Glibc
import WeirSystem

/// The inputs of `-r`: names given, with each folder among them replaced by
/// the files under it, by zstd 1.5.4's rules (`UTIL_createExpandedFNT`):
///
/// - a name given is a folder when `stat` says so (a link to a folder given
///   by name is followed); any other name is kept as given;
/// - a folder's entries come in `readdir` order, `.` and `..` left out,
///   hidden names kept, each as `FOLDER/NAME`;
/// - but not weir's own temporaries (`.weir-XXXXXX`): a partial output, never
///   an input, which the run may remove when it writes into the folder
///   (``StaleTemporaries``); zstd has none to skip; nor a stopped output
///   kept for resuming, `NAME.part` beside its record, nor a record
///   (`.NAME.part.resume`, ``PartialOutput``): the same `-r` run again
///   resumes them, and must not compress them too;
/// - an entry that is a symbolic link is skipped with a warning unless
///   `followLinks` (zstd's `-f`); a followed link to a folder is walked;
/// - anything that is not a folder is an input, devices and FIFOs included:
///   the job refuses what it cannot read, as it does for a name given.
package enum InputTree {
    /// What expanding the names found.
    package struct Expansion: Sendable {
        /// The files, in order.
        package var files: [String] = []
        /// One line per symbolic link skipped (`NAME is a symbolic link, ignoring`).
        package var warnings: [String] = []
        /// The symbolic links skipped, in the order found (their warnings are in `warnings`).
        package var skippedLinks: [String] = []
        /// Folders that could not be read; their files are missing.
        package var errors: [WeirError] = []
    }

    /// Expands `names` (see the type's rules).
    package static func expand(_ names: [String], followLinks: Bool) -> Expansion {
        var expansion = Expansion()
        for name in names {
            if name != "-", let status = FileStatus.of(path: name), status.isDirectory {
                walk(FileName.bytes(of: name), followLinks: followLinks, into: &expansion)
            } else {
                expansion.files.append(name)
            }
        }
        return expansion
    }

    private static func walk(_ folder: [UInt8], followLinks: Bool, into expansion: inout Expansion) {
        let folderName = FileName.string(fromBytes: folder)
        guard let stream = FileName.withCString(folderName, { opendir($0) }) else {
            expansion.errors.append(.system(errno, path: folderName, operation: .openDirectory))
            return
        }
        defer { closedir(stream) }
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { expansion.errors.append(.system(errno, path: folderName, operation: .readDirectory)) }
                return
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            if StaleTemporaries.isTemporaryName(name) { continue }
            let pathBytes = folder + [UInt8(ascii: "/")] + name
            if PartialOutput.isKept(name, at: pathBytes) { continue }
            let path = FileName.string(fromBytes: pathBytes)
            // d_type spares a stat per entry; DT_UNKNOWN (some file systems) asks lstat.
            var type = entry.pointee.d_type
            if type == UInt8(DT_UNKNOWN) { type = lstatType(path) }
            if type == UInt8(DT_LNK) {
                guard followLinks else {
                    expansion.warnings.append("\(FileName.displayed(path)) is a symbolic link, ignoring")
                    expansion.skippedLinks.append(path)
                    continue
                }
                type = FileStatus.of(path: path)?.isDirectory == true ? UInt8(DT_DIR) : UInt8(DT_REG)
            }
            if type == UInt8(DT_DIR) {
                walk(pathBytes, followLinks: followLinks, into: &expansion)
            } else {
                expansion.files.append(path)
            }
        }
    }

    private static func lstatType(_ path: String) -> UInt8 {
        var info = stat()
        guard FileName.withCString(path, { lstat($0, &info) }) == 0 else { return UInt8(DT_REG) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return UInt8(DT_DIR)
        case S_IFLNK: return UInt8(DT_LNK)
        default: return UInt8(DT_REG)
        }
    }
}
