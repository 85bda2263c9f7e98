/// What makes an object over HTTP the same object from one request to the
/// next, taken from the first response: its strong ETag, else its
/// Last-Modified date; and its size (Content-Range's total). Every later
/// request carries it (`If-Match: ETAG`, else `If-Range: DATE`), and every
/// answer is compared with it: a replaced object fails the read that meets
/// it, so no read mixes bytes of two versions.
struct ObjectIdentity: Sendable, Equatable {
    /// The strong ETag, quotes included; nil when the server gave none or a weak one.
    var etag: String?
    /// The Last-Modified date as the server wrote it.
    var lastModified: String?
    /// The object's size in bytes; -1 when the first answer did not say
    /// (a body sent in chunks, without Content-Length).
    var size: Int

    init(head: HTTPHead, size: Int) {
        let tag = head.fields["etag"]
        etag = tag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
        lastModified = head.fields["last-modified"]
        self.size = size
    }

    /// The header lines a request for part of the object carries.
    var conditions: [String] {
        if let etag { return ["If-Match: \(etag)"] }
        if let lastModified { return ["If-Range: \(lastModified)"] }
        return []
    }

    /// How the answer `head` shows another object, nil when it shows this
    /// one (a field it lacks is not held against it; its total is).
    func difference(from head: HTTPHead) -> String? {
        if let etag, let other = head.fields["etag"], other != etag {
            return "its ETag was \(etag), now \(other)"
        }
        if etag == nil, let lastModified, let other = head.fields["last-modified"], other != lastModified {
            return "its Last-Modified was \(lastModified), now \(other)"
        }
        if size >= 0, let total = head.contentRange?.total, total != size {
            return "its size was \(size) bytes, now \(total)"
        }
        return nil
    }
}
