import Glibc
import SystemPackage

/// What an input or output descriptor is, which decides the water marks and
/// whether a size is known.
public enum InputKind: Equatable, Sendable {
    /// A regular file of this size in bytes.
    case regularFile(size: Int)
    /// A pipe, FIFO, socket, terminal or device: no size is known.
    case stream

    /// Looks at `descriptor` with `fstat`.
    public static func of(_ descriptor: FileDescriptor) -> InputKind {
        guard let status = try? Descriptor(descriptor.rawValue, path: "").status(), status.isRegularFile else {
            return .stream
        }
        return .regularFile(size: status.size)
    }

    /// The size, when it is a regular file.
    public var size: Int? {
        if case .regularFile(let size) = self { return size }
        return nil
    }
}
