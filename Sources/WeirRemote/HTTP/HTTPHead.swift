/// The head of the last response of a transfer (after redirects): its
/// status, its reason phrase, and its header fields by lowercased name.
package struct HTTPHead: Sendable, Equatable {
    /// The status code; 0 before a status line was seen.
    package var status = 0
    /// The reason phrase (`Not Found`), empty over HTTP/2.
    package var reason = ""
    /// The header fields, names lowercased; a repeated field's values
    /// joined with `, ` in arrival order, as RFC 9110 5.3 reads them (two
    /// lines `Content-Encoding: gzip` and `Content-Encoding: identity` are
    /// `gzip, identity`).
    package var fields: [String: String] = [:]
    /// The first header line whose field name is followed by whitespace
    /// before its colon (`Content-Encoding : gzip`), which RFC 9112 5.1
    /// says a server must not send and a client must reject: nil when none.
    package var malformed: String?

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
            if malformed == nil, colon > line.startIndex, line[colon - 1] == .space || line[colon - 1] == .tab {
                malformed = String(decoding: line.prefix(200), as: UTF8.self)
            }
            let name = String(decoding: line[..<colon].map { $0 >= .upperA && $0 <= .upperZ ? $0 | 0x20 : $0 },
                              as: UTF8.self)
            let value = Self.text(line[(colon + 1)...], trimming: [.space, .tab])
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
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

    /// The Content-Length: a list of one value repeated (`5, 5`, two
    /// fields alike) is that value (RFC 9112 6.3); nil when absent or not
    /// one number.
    var contentLength: Int? {
        guard let value = fields["content-length"] else { return nil }
        // Each element one word of digits, and all alike.
        let values = Set(value.split(separator: ",").map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }) })
        guard values.count == 1, let words = values.first, words.count == 1,
              words[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(words[0])
    }

    /// Why the head cannot be read (a field name with whitespace before
    /// its colon: the line), nil when it can.
    var unreadable: String? {
        malformed.map { "a header line with whitespace between the field name and the colon (\($0)): "
            + "RFC 9112 5.1 says such a response is rejected" }
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
