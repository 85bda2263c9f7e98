/// The head of the last response of a transfer (after redirects): its
/// status, its reason phrase, and its header fields by lowercased name.
package struct HTTPHead: Sendable, Equatable {
    /// The status code; 0 before a status line was seen.
    package var status = 0
    /// The reason phrase (`Not Found`), empty over HTTP/2.
    package var reason = ""
    /// The header fields, names lowercased; a repeated field keeps its last value.
    package var fields: [String: String] = [:]

    /// Takes one header line's bytes as libcurl hands them (with its CR LF):
    /// a status line starts a new response (a redirect's head is forgotten).
    /// Read as bytes: a field's name and the status line are ASCII (RFC 9110), and
    /// the same lines walked as Characters (grapheme breaks, generic slices
    /// unspecialized across modules) made them a measurable share of a
    /// `-dc URL`'s CPU, a hundred responses' worth (bench/results/2026-11-29-url-cpu.md).
    mutating func take(line bytes: UnsafeRawBufferPointer) {
        let line = Self.trimming(bytes, of: [.space, .carriageReturn, .lineFeed])
        if line.starts(with: "HTTP/".utf8) {
            // HTTP/VERSION SP STATUS SP REASON
            let words = line.split(separator: .space, maxSplits: 2, omittingEmptySubsequences: true)
            self = HTTPHead(status: words.count > 1 ? Int(String(decoding: words[1], as: UTF8.self)) ?? 0 : 0,
                            reason: words.count > 2 ? Self.text(words[2], trimming: [.space]) : "", fields: [:])
        } else if let colon = line.firstIndex(of: .colon) {
            let name = line[..<colon].map { $0 >= .upperA && $0 <= .upperZ ? $0 | 0x20 : $0 }
            fields[String(decoding: name, as: UTF8.self)] = Self.text(line[(colon + 1)...], trimming: [.space, .tab])
        }
    }

    /// The text of `bytes` without the bytes of `unwanted` at either end.
    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>, trimming unwanted: [UInt8]) -> String {
        String(decoding: trimming(UnsafeRawBufferPointer(rebasing: bytes), of: unwanted), as: UTF8.self)
    }

    /// `bytes` without the bytes of `unwanted` at either end.
    private static func trimming(_ bytes: UnsafeRawBufferPointer, of unwanted: [UInt8]) -> UnsafeRawBufferPointer {
        var low = bytes.startIndex, high = bytes.endIndex
        while low < high, unwanted.contains(bytes[low]) { low += 1 }
        while high > low, unwanted.contains(bytes[high - 1]) { high -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[low ..< high])
    }

    /// How the body is coded when it is not the object's own bytes: the
    /// field and its value (`Content-Encoding: gzip`, or a Transfer-Encoding
    /// other than chunked, which libcurl undoes); nil for none or `identity`.
    var coding: String? {
        if let value = fields["content-encoding"], !Self.isIdentity(value, besides: []) {
            return "Content-Encoding: \(value)"
        }
        if let value = fields["transfer-encoding"], !Self.isIdentity(value, besides: ["chunked"]) {
            return "Transfer-Encoding: \(value)"
        }
        return nil
    }

    /// Whether every coding the list `value` names is `identity` or one of `plain`, any case.
    private static func isIdentity(_ value: String, besides plain: Set<String>) -> Bool {
        value.split(separator: ",").allSatisfy { coding in
            // A coding is a token: no space within it.
            let name = coding.filter { $0 != " " && $0 != "\t" }.lowercased()
            return name == "identity" || plain.contains(name)
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

private extension UInt8 {
    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), colon = UInt8(ascii: ":")
    static let carriageReturn = UInt8(ascii: "\r"), lineFeed = UInt8(ascii: "\n")
    static let upperA = UInt8(ascii: "A"), upperZ = UInt8(ascii: "Z")
}
