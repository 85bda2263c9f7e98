/// What makes an object over HTTP the same object from one request to the
/// next, taken from the first response: its ETag (strong or weak), its
/// Last-Modified date, and its size (Content-Range's total). Every later
/// request carries what HTTP lets it carry (`If-Match: ETAG` for a strong
/// ETag, else `If-Range: DATE`; a weak ETag in neither, RFC 9110 13.1.1 and
/// 13.1.5), and every answer is compared with all of it: a replaced object
/// fails the read that meets it, so no read mixes bytes of two versions
/// that the server tells apart.
struct ObjectIdentity: Sendable, Equatable {
    /// The ETag, quotes (and a weak one's `W/`) included; nil when the server gave none.
    var etag: String?
    /// The Last-Modified date as the server wrote it.
    var lastModified: String?
    /// The object's size in bytes; -1 when the first answer did not say
    /// (a body sent in chunks, without Content-Length).
    var size: Int

    init(head: HTTPHead, size: Int) {
        etag = head.fields["etag"]
        lastModified = head.fields["last-modified"]
        self.size = size
    }

    /// Whether the ETag is strong (not `W/`): only a strong one is a precondition.
    private var strongETag: String? { etag.flatMap { Self.isWeak($0) ? nil : $0 } }

    /// What keeps a resumed answer to this object (the rest of one cut)
    /// from being another version's, nil when something does: a strong
    /// ETag (`If-Match`) or a Last-Modified date (`If-Range`: a changed
    /// object comes whole, which is refused). A weak ETag, or none, does not.
    var resumptionRisk: String? {
        if strongETag != nil || lastModified != nil { return nil }
        return etag.map { "only a weak ETag (\($0))" } ?? "neither an ETag nor a Last-Modified date"
    }

    /// The header lines a request for part of the object carries.
    var conditions: [String] {
        if let strongETag { return ["If-Match: \(strongETag)"] }
        if let lastModified { return ["If-Range: \(lastModified)"] }
        return []
    }

    /// How the answer `head` shows another object, nil when it shows this
    /// one. ETags are compared as RFC 9110 13.1.2's weak comparison does
    /// (the opaque tags alike, `W/` or not): two versions a weak ETag names
    /// apart are two; a strong one, which the requests carry (If-Match),
    /// strongly. An ETag the first answer gave must be in every answer
    /// (RFC 9110 15.3.7: a 206 carries the ETag a 200 would): without it,
    /// nothing says the bytes are the same object's; so must its
    /// Last-Modified where that date is the requests' condition (If-Range,
    /// no strong ETag). Its total is compared, and a 200's Content-Length.
    func difference(from head: HTTPHead) -> String? {
        if let etag {
            guard let other = head.fields["etag"] else { return "its ETag was \(etag), now none" }
            // A strong tag the requests carried (If-Match) is compared strongly: parts combine only under it.
            let alike = strongETag != nil ? other == etag : Self.opaque(other) == Self.opaque(etag)
            if !alike { return "its ETag was \(etag), now \(other)" }
        }
        // Where the date is what the requests carried (If-Range), every answer must repeat it: a server
        // that ignored If-Range would otherwise pass another version's bytes as this one's.
        if strongETag == nil, let lastModified {
            guard let other = head.fields["last-modified"] else {
                return "its Last-Modified was \(lastModified), now none"
            }
            if other != lastModified { return "its Last-Modified was \(lastModified), now \(other)" }
        }
        if size >= 0, let total = head.contentRange?.total, total != size {
            return "its size was \(size) bytes, now \(total)"
        }
        if size >= 0, head.status == 200, let length = head.contentLength, length != size {
            return "its size was \(size) bytes, now a whole answer of \(length) (Content-Length)"
        }
        return nil
    }

    private static func isWeak(_ tag: String) -> Bool { tag.hasPrefix("W/") }

    /// The opaque tag: the ETag without a weak one's `W/`.
    private static func opaque(_ tag: String) -> Substring { isWeak(tag) ? tag.dropFirst(2) : tag[...] }
}
