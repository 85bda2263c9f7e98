import CSupport
import Glibc

/// Moving a file to a name only if the name is free, in one step: no file
/// that appeared meanwhile is ever replaced (``OutputFile``'s commit
/// without `-f`).
package enum NoReplaceRename {
    /// Moves `from` to `to` unless `to` exists: `renameat2(RENAME_NOREPLACE)`,
    /// or `link` + `unlink` where the file system does not support it (both
    /// refuse an existing `to`). Returns 0 or the errno (EEXIST when `to`
    /// exists).
    package static func move(_ from: String, to: String) -> Int32 {
        FileName.withCString(from) { from in
            FileName.withCString(to) { to in
                if weir_rename_noreplace(from, to) == 0 { return 0 }
                let code = errno
                guard code == EINVAL || code == ENOSYS || code == ENOTSUP else { return code }
                if link(from, to) != 0 { return errno }
                unlink(from)
                return 0
            }
        }
    }
}
