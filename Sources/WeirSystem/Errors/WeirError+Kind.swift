extension WeirError {
    /// What went wrong, in a form a program can compare and switch on.
    ///
    /// A struct of codes rather than an enum, as swift-nio's
    /// `FileSystemError.Code` is: a later version of Weir adds codes without
    /// breaking a caller's code, so a `switch` over a kind names the codes it
    /// handles and ends in `default:`.
    ///
    /// ```swift
    /// switch error.kind {
    /// case .notZstd, .corrupt: print("not a good .zst")
    /// case .cancelled: break
    /// default: print(error)
    /// }
    /// ```
    ///
    /// Each layer of the engine declares the codes it throws, beside its
    /// errors' factories; `import Weir` brings them all. A system call's
    /// failure carries its `errno` (``system(errno:)``, ``errno``).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as its static property is spelled; unique among
        /// the codes of every layer.
        private let name: String
        /// The `errno` of ``system(errno:)``; nil for every other code.
        private let number: Int32?

        /// A code named `name`, for the layer that declares it (a static
        /// property of the same name, in an extension in its own target).
        package init(_ name: String) {
            self.name = name
            number = nil
        }

        /// A system call failed with this `errno`.
        public static func system(errno: Int32) -> Kind {
            Kind(name: "system", number: errno)
        }

        private init(name: String, number: Int32?) {
            self.name = name
            self.number = number
        }

        /// The `errno` of a failed system call (``system(errno:)``); nil for
        /// every other kind.
        public var errno: Int32? { number }

        /// The code's name (`notZstd`), or `system(errno: N)`.
        public var description: String {
            number.map { "\(name)(errno: \($0))" } ?? name
        }
    }
}

/// The codes of the system layer: the system calls, reading and the run's
/// control.
extension WeirError.Kind {
    /// The compressed input ends in the middle of a frame, or a file changed
    /// size while it was read.
    public static let truncated = Self("truncated")
    /// The input is not a regular file (a directory, for example).
    public static let notRegularFile = Self("notRegularFile")
    /// The run was cancelled (for example by a signal).
    public static let cancelled = Self("cancelled")
    /// libzstd, or a limit of weir's, failed for a reason other than bad
    /// data (memory, parameters, mappings).
    public static let library = Self("library")
}
