import WeirSystem

/// The URLs the command line takes as inputs (http:// and https://), and
/// how each is read: registered with ``NamedInputs`` under the URL itself,
/// so that the engine opens it where it would open a file.
package enum RemoteInputs {
    /// How an input URL is read.
    package enum Reading: Sendable {
        /// At offsets (``RemoteObject``): listings, members, ranges.
        case atOffsets
        /// From start to end, as a pipe (``RemoteStream``): `-d`, `-dc`, `-t`.
        case stream
    }

    /// The client every remote input shares: its idle connections are reused.
    static let client = HTTPClient()

    /// Whether `name` is a URL weir reads (http:// or https://, any case).
    package static func isURL(_ name: String) -> Bool {
        let lower = name.prefix(8).lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// The name of the object in `url`: its path's last part, without the
    /// query and fragment (`https://host/a/b.tar.zst?sig=x` gives `b.tar.zst`);
    /// nil when the path ends with `/` or is empty.
    package static func objectName(_ url: String) -> String? {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[slash...]
        guard let last = path.split(separator: "/", omittingEmptySubsequences: false).last, !last.isEmpty,
              last != ".", last != ".." else { return nil }
        return String(last)
    }

    /// Registers `url` as an input read as `reading` says.
    package static func register(_ url: String, reading: Reading) {
        switch reading {
        case .atOffsets:
            // One object for every open of the URL in a run: its tail is read once.
            let opened = Locked<RemoteObject?>(nil)
            NamedInputs.register(url) { name throws(WeirError) in
                if let object = opened.current { return Descriptor(source: object, path: name) }
                let object = try RemoteObject(url: name, client: client)
                opened.withLock { $0 = object }
                return Descriptor(source: object, path: name)
            }
        case .stream:
            NamedInputs.register(url) { name throws(WeirError) in try RemoteStream.open(name, client: client) }
        }
    }

    /// The failure that ended the stream of `url` early, if any.
    package static func failure(for url: String) -> WeirError? { RemoteStream.failure(for: url) }
}
