/// Inputs named by something other than a path, which
/// ``Descriptor/openForReading(_:operation:)`` opens through an opener
/// registered for the exact name: the command line registers each URL it is
/// given (WeirRemote's openers), so that the engine, which takes inputs by
/// name, reads a remote archive where it would read a file. Nothing is
/// registered unless a caller registers it: a library user's paths are
/// always paths, whatever they look like.
package enum NamedInputs {
    /// Opens the input: a ``Descriptor`` on a ``PositionalSource``, or on
    /// the read end of a pipe its opener fills (which the caller closes).
    package typealias Opener = @Sendable (String) throws(WeirError) -> Descriptor

    private static let openers = Locked<[String: Opener]>([:])

    /// Registers `opener` for the input named `name`, replacing any other.
    package static func register(_ name: String, _ opener: @escaping Opener) {
        openers.withLock { $0[name] = opener }
    }

    /// The opener registered for `name`, if any.
    package static func opener(for name: String) -> Opener? {
        openers.withLock { $0[name] }
    }

    /// Whether `name` has an opener.
    package static func isRegistered(_ name: String) -> Bool { opener(for: name) != nil }
}
