import CCurl
import Glibc
import WeirFormats
import WeirSystem

/// The URLs the command line takes as inputs (http:// and https://), and
/// how each is read: registered with ``NamedInputs`` under the URL itself,
/// so that the engine opens it where it would open a file.
package enum RemoteInputs {
    /// How an input URL is read.
    package enum Reading: Sendable {
        /// At offsets (``RemoteObject``): listings, members, ranges.
        case atOffsets
        /// From start to end (`-d`, `-dc`, `-t`): a seekable archive (its
        /// seek table in the tail ``RemoteObject`` opens with) on a server
        /// that serves ranges, at offsets, which the engine reads ahead by
        /// several range requests at once (`PositionalReadAhead`) and
        /// decodes as a file; anything else as a pipe (``RemoteStream``).
        case whole
    }

    /// The client every remote input shares: its idle connections are reused.
    static let client = HTTPClient()

    /// Starts loading libcurl on a thread of its own when one of `arguments`
    /// is a URL, so that the load (libcurl and the 25 libraries it needs)
    /// overlaps the rest of the start. Not for a command that
    /// forks (`weir mount` goes to the background): a child forked during
    /// the load would wait for it forever.
    package static func startLoadingClient(ifAnyOf arguments: UnsafeBufferPointer<UnsafeMutablePointer<CChar>?>) {
        // On argv as the kernel gave it: no String made before the parser.
        if arguments.contains(where: { $0.map { isURL(cString: $0) } ?? false }) { weir_curl_load_in_background() }
    }

    /// Whether `name` is a URL weir reads (http:// or https://, any case).
    package static func isURL(_ name: String) -> Bool { name.withCString { isURL(cString: $0) } }

    /// ``isURL(_:)`` of a C string: the one rule both read.
    private static func isURL(cString name: UnsafePointer<CChar>) -> Bool {
        strncasecmp(name, "http://", 7) == 0 || strncasecmp(name, "https://", 8) == 0
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
        case .whole:
            NamedInputs.register(url) { name throws(WeirError) in try openWhole(name) }
        }
    }

    /// Opens `url` to be read from start to end: on a ``RemoteObject`` when
    /// the server serves ranges and the object ends with a seek table, else
    /// streamed. The object's tail (one request) tells both; a server that
    /// answers it with the whole object is stopped at its first bytes.
    private static func openWhole(_ url: String) throws(WeirError) -> Descriptor {
        let object: RemoteObject
        do {
            object = try RemoteObject(url: url, client: client)
        } catch where error.kind == .rangesUnsupported {
            return try RemoteStream.open(url, client: client)
        }
        // A table that cannot be read (corrupt, or cut) leaves the stream to say what is wrong.
        let file = Descriptor(source: object, path: url)
        let table: SeekTable? = (try? SeekTable.decode(fileSize: object.size, path: url) {
            count, offset throws(WeirError) in try file.read(count: count, at: offset, operation: .readSeekTable)
        }) ?? nil
        guard let table, !table.entries.isEmpty else {
            return try RemoteStream.open(url, client: client, known: object.identity)
        }
        return file
    }

    /// The failure that ended the stream of `url` early, if any.
    package static func failure(for url: String) -> WeirError? { RemoteStream.failure(for: url) }
}
