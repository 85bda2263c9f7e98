/// The errors of reading a `.tar.zst`'s members through its member index
/// (docs/members.md).
extension WeirError {
    /// A file with no member index (``Kind/noMemberIndex``) whose content
    /// starts as a tar does.
    package static func noMemberIndex(path: String) -> WeirError {
        WeirError(.noMemberIndex, path: path, operation: .readMemberIndex, lead: nil,
                  detail: "has no member index, so its tar members cannot be read one by one",
                  hint: .addMemberIndex)
    }

    /// A file whose content does not start with a tar header (``Kind/notTar``).
    package static func notTar(path: String, operation: Operation) -> WeirError {
        WeirError(.notTar, path: path, operation: operation, lead: nil,
                  detail: "its content is not a tar archive (no tar header at its start)")
    }

    /// A member whose header blocks, at content offset `offset`, are not the
    /// ones the index lists for `name` (`problem` says how).
    package static func memberIndexDisagrees(path: String, name: String, offset: Int,
                                             _ problem: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: .decompress, lead: nil,
                  detail: "member index disagrees with the archive: member \(name.debugDescription) at content "
                      + "offset \(offset): \(problem); nothing of it written", offset: offset)
    }

    /// A member whose bytes are not a file's contents (``TarMember/contents``).
    package static func notAFile(path: String, name: String, why: String) -> WeirError {
        WeirError(.notRegularFile, path: path, operation: .decompress, lead: nil,
                  detail: "member \(name.debugDescription) \(why)")
    }
}
