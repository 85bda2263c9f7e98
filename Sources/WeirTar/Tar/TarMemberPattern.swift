import Glibc

/// A name given to `--member`, matched against a member's path as GNU tar
/// matches the names given to `tar x --wildcards`: `fnmatch(3)` without
/// `FNM_PATHNAME` (so `*`, `?` and `[...]` match `/` too) and with
/// `FNM_LEADING_DIR`, so that a folder's name takes everything under it
/// (`dir` matches `dir/` and `dir/a/b`), as `tar x dir` does. Trailing
/// slashes of the name given are dropped, as tar drops them, and so are a
/// member's: tar matches a folder entry `dir/` as `dir`, so `dir/*` takes
/// what is under it and not the folder itself. The empty pattern matches
/// every member, as tar's does.
///
/// Paths and patterns are bytes, as tar stores them (not necessarily UTF-8).
public struct TarMemberPattern: Sendable, Equatable {
    /// The pattern as given (for messages).
    public let text: [UInt8]
    /// glibc's `FNM_LEADING_DIR` (a GNU extension Swift's Glibc module
    /// does not import): a match may stop at a `/` of the name.
    package static let leadingDirectory: Int32 = 1 << 3
    /// The pattern matched: `text` without trailing slashes, NUL-terminated.
    private let matched: [CChar]
    /// `text` without trailing slashes when it holds none of fnmatch's
    /// special characters (`*?[\\`): then a match is that name, or a name
    /// under it, compared as bytes (as tar compares names without wildcards).
    private let literal: [UInt8]?

    /// A pattern of the bytes `text`.
    public init(_ text: [UInt8]) {
        self.text = text
        var trimmed = text[...]
        while trimmed.count > 1, trimmed.last == UInt8(ascii: "/") { trimmed = trimmed.dropLast() }
        matched = trimmed.map { CChar(bitPattern: $0) } + [0]
        literal = trimmed.contains { "*?[\\".utf8.contains($0) } ? nil : Array(trimmed)
    }

    /// A pattern of the UTF-8 bytes of `text`.
    public init(_ text: String) {
        self.init(Array(text.utf8))
    }

    /// Whether the member at `path` is selected.
    public func matches(_ path: [UInt8]) -> Bool {
        path.withUnsafeBytes { matches($0) }
    }

    /// Whether the member at `path` (bytes valid during the call) is selected.
    package func matches(_ whole: UnsafeRawBufferPointer) -> Bool {
        var count = whole.count
        while count > 1, whole[count - 1] == UInt8(ascii: "/") { count -= 1 }
        if let literal {
            if literal.isEmpty { return true }
            // Compared in place: a selection asks this of every member of an archive.
            guard count >= literal.count, whole[0] == literal[0] else { return false }
            let same = literal.withUnsafeBufferPointer { prefix in
                guard let name = whole.baseAddress, let wanted = prefix.baseAddress else { return false }
                return memcmp(name, wanted, prefix.count) == 0
            }
            return same && (count == literal.count || whole[literal.count] == UInt8(ascii: "/"))
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { name in
            for index in 0 ..< count { name[index] = CChar(bitPattern: whole[index]) }
            name[count] = 0
            return matched.withUnsafeBufferPointer { pattern in
                fnmatch(pattern.baseAddress, name.baseAddress, Self.leadingDirectory) == 0
            }
        }
    }
}
