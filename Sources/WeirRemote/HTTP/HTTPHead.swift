/// The head of the last response of a transfer (after redirects): its
/// status, its reason phrase, and its header fields by lowercased name.
package struct HTTPHead: Sendable, Equatable {
    /// The status code; 0 before a status line was seen.
    package var status = 0
    /// The reason phrase (`Not Found`), empty over HTTP/2.
    package var reason = ""
    /// The header fields, names lowercased; a repeated field keeps its last value.
    package var fields: [String: String] = [:]

    /// Takes one header line as libcurl hands it (with its CR LF): a status
    /// line starts a new response (a redirect's head is forgotten).
    mutating func take(line: String) {
        let trimmed = line.trimmingCharacters(in: " \r\n")
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            self = HTTPHead(status: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
                            reason: parts.count > 2 ? String(parts[2]) : "", fields: [:])
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = trimmed[..<colon].lowercased()
            fields[name] = String(trimmed[trimmed.index(after: colon)...]).trimmingCharacters(in: " \t")
        }
    }

    /// `Content-Range: bytes FIRST-LAST/TOTAL` (or `bytes */TOTAL`), parsed:
    /// the range (nil for `*`) and the total (nil for `*`).
    var contentRange: (range: Range<Int>?, total: Int?)? {
        guard let value = fields["content-range"], value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let total = Int(spec[spec.index(after: slash)...])
        let first = spec[..<slash]
        if first == "*" { return (nil, total) }
        let bounds = first.split(separator: "-")
        guard bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]), low <= high else { return nil }
        return (low ..< high + 1, total)
    }
}

extension String {
    /// The string without the characters of `set` at either end.
    func trimmingCharacters(in set: String) -> String {
        let unwanted = Set(set)
        return String(self.drop(while: { unwanted.contains($0) }).reversed()
            .drop(while: { unwanted.contains($0) }).reversed())
    }
}
