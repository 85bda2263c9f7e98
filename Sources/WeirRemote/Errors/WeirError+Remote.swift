import CCurl
import WeirSystem

/// The codes of inputs read over HTTP (docs/remote.md).
extension WeirError.Kind {
    /// The server answered with an error status (404, 403, 5xx after the
    /// retries), or the transfer failed (a refused connection, a TLS
    /// failure, a timeout after the retries).
    public static let remoteFailed = Self("remoteFailed")
    /// The server sends the whole object where a part was asked (it ignores
    /// `Range`): a member or a range cannot be read from it.
    public static let rangesUnsupported = Self("rangesUnsupported")
    /// The object changed while it was read (another ETag, Last-Modified or
    /// size): nothing of two versions is mixed.
    public static let remoteChanged = Self("remoteChanged")
    /// `-d URL` without `-o` where the URL's path has no last part to name
    /// the output (it ends with `/`, or is empty): a query never names it.
    public static let remoteUnnamed = Self("remoteUnnamed")
}

/// The errors of inputs read over HTTP. Each names the URL (as the path)
/// and what the server or libcurl said, in one line.
extension WeirError {
    /// The server answered `status` (`reason`, its phrase), after `attempts` tries.
    package static func httpStatus(url: String, status: Int, reason: String, attempts: Int) -> WeirError {
        let phrase = reason.isEmpty ? "" : " \(reason)"
        return WeirError(.remoteFailed, path: url, operation: .read, lead: nil,
                         detail: "the server answered \(status)\(phrase)" + tries(attempts))
    }

    /// The transfer failed in libcurl: `message` is its words (curl_easy_strerror and its error buffer).
    package static func transferFailed(url: String, message: String, attempts: Int) -> WeirError {
        WeirError(.remoteFailed, path: url, operation: .read, lead: nil,
                  detail: "transfer failed: \(message)" + tries(attempts))
    }

    /// A transfer cut at `offset`, after bytes of it were taken, that cannot
    /// go on: the object has no strong validator (`what` says what it has),
    /// and parts of an answer combine only under one (RFC 9110 15.3.7.3).
    package static func cannotResume(url: String, at offset: Int, _ what: String) -> WeirError {
        WeirError(.remoteFailed, path: url, operation: .read, lead: nil,
                  detail: "the answer was cut at offset \(offset) and cannot be resumed: the server gave \(what), "
                      + "so the rest could be another version's")
    }

    /// The body ended before the bytes asked for, every try: for a stream,
    /// short of the object's `size` (the first answer's), the last answer's `head` saying how.
    package static func shortBody(url: String, at offset: Int, size: Int? = nil, head: HTTPHead? = nil,
                                  attempts: Int) -> WeirError {
        var detail = "the server's answer ended early, at offset \(offset)"
        if let size { detail += " of the object's \(size) bytes" }
        if let head, head.status != 0 {
            let range = head.fields["content-range"].map { ", Content-Range: \($0)" } ?? ""
            detail += " (its last answer: \(head.status)\(range))"
        }
        return WeirError(.remoteFailed, path: url, operation: .read, lead: nil, detail: detail + tries(attempts))
    }

    /// A server that answered a range request with the whole object (`status`, 200).
    package static func rangesUnsupported(url: String, status: Int) -> WeirError {
        WeirError(.rangesUnsupported, path: url, operation: .read, lead: nil,
                  detail: "the server cannot serve parts of it (it answered a range request with \(status) "
                      + "and the whole object): members and ranges need range requests")
    }

    /// The object is no longer the one first read: `what` says how.
    package static func remoteChanged(url: String, _ what: String) -> WeirError {
        WeirError(.remoteChanged, path: url, operation: .read, lead: nil,
                  detail: "the object changed while it was read (\(what)); nothing of two versions is used")
    }

    /// An answer weir cannot read: `what` says how.
    package static func badAnswer(url: String, _ what: String) -> WeirError {
        WeirError(.remoteFailed, path: url, operation: .read, lead: nil, detail: "unreadable answer: \(what)")
    }

    /// A body coded (`coding`: the field and its value, `Content-Encoding: gzip`) where the
    /// object's own bytes were asked for (`Accept-Encoding: identity`).
    package static func codedBody(url: String, _ coding: String) -> WeirError {
        WeirError(.remoteFailed, path: url, operation: .read, lead: nil,
                  detail: "the server sent the object coded (\(coding)) though asked for its own bytes "
                      + "(Accept-Encoding: identity): a coded body is not read")
    }

    /// A redirect that was not followed (the last answer's `head`, a 3xx):
    /// too many in a row (a loop), or to a scheme other than http and
    /// https; libcurl's `code` and `message` say which.
    package static func redirectFailed(url: String, head: HTTPHead, code: CURLcode, message: String) -> WeirError {
        let status = "\(head.status)" + (head.reason.isEmpty ? "" : " \(head.reason)")
        let target = head.fields["location"].map { " to \(FileName.withoutPassword($0))" } ?? ""
        let what = code == CURLE_TOO_MANY_REDIRECTS
            ? "the server redirected more than \(HTTPClient.redirectsFollowed) times in a row (a loop?), the last "
                + "(\(status))\(target)"
            : "the server redirected (\(status))\(target), which is not followed: only http:// and https:// are"
                + (message.isEmpty ? "" : " (\(message))")
        return WeirError(.remoteFailed, path: url, operation: .read, lead: nil, detail: what)
    }

    /// A URL whose path has no last part (`http://host/`, `http://host/a/?f=x.zst`):
    /// nothing names the output of `-d`, and no part of a query ever does.
    package static func unnamedObject(url: String) -> WeirError {
        WeirError(.remoteUnnamed, path: url, operation: .create, lead: nil,
                  detail: "the URL's path has no last part to name the output (a query never names it): "
                      + "name the output with -o, or write it with -c")
    }

    private static func tries(_ attempts: Int) -> String {
        attempts > 1 ? " (after \(attempts) tries)" : ""
    }
}
