#if canImport(Glibc)
import Glibc
#endif

/// What an input or output descriptor is, which decides the water marks and
/// whether a size is known.
public enum InputKind: Equatable, Sendable {
    /// A regular file of this size in bytes.
    case regularFile(size: Int)
    /// A pipe, FIFO, socket, terminal or device: no size is known.
    case stream

    /// Looks at `fd` with `fstat`.
    public static func of(_ fd: Int32) -> InputKind {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .stream }
        if (info.st_mode & S_IFMT) == S_IFREG { return .regularFile(size: Int(info.st_size)) }
        return .stream
    }

    /// The size, when it is a regular file.
    public var size: Int? {
        if case .regularFile(let size) = self { return size }
        return nil
    }
}
