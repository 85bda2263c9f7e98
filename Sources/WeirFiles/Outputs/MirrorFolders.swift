import Glibc
import WeirSystem

/// Creates the folders `--output-dir-mirror ROOT` writes into, before any
/// output, as zstd 1.5.4 does (`UTIL_mirrorSourceFilesDirectories`): ROOT
/// with mode 0755, then for each input's folder every level of it under
/// ROOT, each with the mode of the source folder it mirrors. A folder that
/// exists already is kept as it is. Inputs with a `..` part are left out
/// (their jobs fail); nothing is created when no input is left.
package enum MirrorFolders {
    /// Creates the folders for `inputs` under `root`; returns the failures
    /// (the jobs writing there then fail as well, naming the file).
    package static func create(for inputs: [String], root: String) -> [WeirError] {
        let valid = inputs.filter { $0 != "-" && OutputName.mirroredFolder(for: $0, root: root) != nil }
        guard !valid.isEmpty else { return [] }
        var errors: [WeirError] = []
        make(root, mode: 0o755, errors: &errors)
        var done = Set<String>()
        for input in valid {
            let scalars = input.unicodeScalars
            guard let last = scalars.lastIndex(of: "/") else { continue }
            // Each level of the input's folder, as given (its mode) and as mirrored.
            var index = scalars.startIndex
            while index < last {
                let end = scalars[scalars.index(after: index)...last].firstIndex(of: "/") ?? last
                let source = String(String.UnicodeScalarView(scalars[..<end]))
                index = end
                let mirrored = OutputName.trimmed(source)
                guard !mirrored.isEmpty, mirrored != ".", done.insert(mirrored).inserted else { continue }
                let mode = FileStatus.of(path: source).map { $0.isDirectory ? $0.mode & 0o7777 : 0o755 } ?? 0o755
                let separator = root.unicodeScalars.last == "/" ? "" : "/"
                make(root + separator + mirrored, mode: mode, errors: &errors)
            }
        }
        return errors
    }

    private static func make(_ path: String, mode: mode_t, errors: inout [WeirError]) {
        if FileName.withCString(path, { mkdir($0, mode) }) != 0, errno != EEXIST {
            errors.append(.system(errno, path: path, operation: .createDirectory))
        }
    }
}
