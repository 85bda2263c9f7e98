import WeirFormats
import WeirSystem

/// The codes of tar's members read through a member index.
extension WeirError.Kind {
    /// A `.tar.zst` without a member index, where one is needed.
    public static let noMemberIndex = Self("noMemberIndex")
    /// The content is not a tar archive where one was expected.
    public static let notTar = Self("notTar")
}

/// The errors of reading a `.tar.zst`'s members through its member index
/// (docs/members.md).
extension WeirError {
    /// A file with no member index (``Kind/noMemberIndex``) whose content
    /// starts as a tar does: `weir --index` adds one, unless the file is one
    /// zstd frame, which cannot be read in parts (then it is recompressed).
    package static func noMemberIndex(path: String, singleFrame: Bool) -> WeirError {
        WeirError(.noMemberIndex, path: path, operation: .readMemberIndex, lead: nil,
                  detail: "has no member index, so its tar members cannot be read one by one"
                      + (singleFrame ? " (it is one zstd frame)" : ""),
                  hint: singleFrame ? .recompress : .addMemberIndex)
    }

    /// A member whose header blocks, at content offset `offset`, are not the
    /// ones the index lists for `name` (`problem` says how).
    package static func memberIndexDisagrees(path: String, name: String, offset: Int,
                                             _ problem: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: .decompress, lead: nil,
                  detail: "member index disagrees with the archive: member \(name.debugDescription) at content "
                      + "offset \(offset): \(problem); nothing of it written")
    }

    /// A member index whose records end otherwise than the tar (`weir -t`'s check, in the engine).
    package static func memberIndexDisagrees(path: String, _ problem: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: .test, lead: nil,
                  detail: "member index disagrees with the archive: \(problem)")
    }

    /// A member whose bytes are not a file's contents (`TarMember.contents`, in the engine).
    package static func notAFile(path: String, name: String, why: String) -> WeirError {
        WeirError(.notRegularFile, path: path, operation: .decompress, lead: nil,
                  detail: "member \(name.debugDescription) \(why)")
    }

    /// A tar stream whose block at content offset `offset` is not a tar header (``Kind/notTar``).
    package static func notTar(path: String, operation: Operation, at offset: Int) -> WeirError {
        WeirError(.notTar, path: path, operation: operation, lead: nil,
                  detail: offset == 0 ? "its content is not a tar archive (no tar header at its start)"
                      : "its content is not a tar archive past offset \(offset) (no tar header there)")
    }

    /// A tar stream that ends inside a member, at content offset `offset`.
    package static func tarEndsEarly(path: String, at offset: Int) -> WeirError {
        WeirError(.truncated, path: path, operation: .decompress, lead: .truncatedInput,
                  detail: "the tar archive ends inside a member, at content offset \(offset)")
    }

    /// `corrupt member index at offset N: DETAIL`, where N is the file
    /// offset of the index's skippable frame.
    package static func corruptMemberIndex(path: String, offset: Int, _ detail: String) -> WeirError {
        WeirError(.corrupt, path: path, operation: .readMemberIndex, lead: nil,
                  detail: "corrupt member index at offset \(offset): \(detail)", offset: offset)
    }
}
