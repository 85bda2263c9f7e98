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
    private static let failures = Locked<[String: WeirError]>([:])

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

    /// Keeps `error` as what ended the input named `name` early: its opener
    /// handed over a pipe that then ended before the input did (a network
    /// failure past the first bytes). Kept before the pipe's end is closed.
    package static func keepFailure(_ error: WeirError, for name: String) {
        failures.withLock { $0[name] = error }
    }

    /// The failure that ended the input named `name` early, if one did: a
    /// reader that reached its end must not take what it read for the whole.
    package static func failure(for name: String) -> WeirError? { failures.withLock { $0[name] } }
}
