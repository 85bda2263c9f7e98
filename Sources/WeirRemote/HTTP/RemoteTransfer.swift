import CCurl
import Glibc
import WeirSystem

/// One stretch of an object's bytes over HTTP, delivered in order however
/// many requests it takes: a request that fails for a reason that may pass
/// (a timeout, a reset connection, a 5xx, 408 or 429, a body that ends
/// early) is made again after a pause that doubles each time, from the byte
/// reached (`Range: bytes=REACHED-`), with the object's identity
/// (``ObjectIdentity``), up to ``triesInARow`` tries without a byte gained;
/// then the last failure is the error. Anything else (404, 403, a TLS
/// failure, a changed object, a server that ignores `Range` where a part
/// is asked) fails at once.
struct RemoteTransfer {
    /// Tries in a row that gain no byte before the read fails.
    static let triesInARow = 6
    /// The first pause before a try again, in milliseconds (then doubled,
    /// up to ``longestPause``): `WEIR_HTTP_RETRY_PAUSE_MS` changes it.
    static let firstPause: Int = ProcessEnvironment.value("WEIR_HTTP_RETRY_PAUSE_MS").flatMap { Int($0) } ?? 250
    /// The longest pause, in milliseconds.
    static let longestPause = 4000

    /// libcurl's failures that may pass on another try.
    static let passing: Set<UInt32> = [
        CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
        CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3,
    ].map(\.rawValue).reduce(into: []) { $0.insert($1) }

    let client: HTTPClient
    let url: String

    /// Delivers the bytes `start ..< end` (to the object's end when `end`
    /// is nil) to `deliver`, in order; `identity` is the object's (taken
    /// from the first answer when nil: a GET from 0 to the end is then a
    /// plain GET, which a server without ranges answers too). `deliver`
    /// returns false to stop (the reader is gone): the transfer then ends
    /// without an error.
    ///
    /// - Returns: the offset reached.
    /// - Throws: `WeirError` naming the URL and what the server or libcurl said.
    @discardableResult
    func run(from start: Int, to end: Int?, identity: inout ObjectIdentity?,
             deliver: (UnsafeRawBufferPointer) -> Bool) throws(WeirError) -> Int {
        var position = start
        var tries = 0, total = 0
        while true {
            tries += 1
            total += 1
            // The first request of a stream from 0 is a plain GET, which a
            // server without ranges answers too (checked against `identity`
            // when one is known); every later one asks from the byte reached.
            let whole = start == 0 && end == nil && position == 0
            let range: String? = whole ? nil : "\(position)-" + (end.map { String($0 - 1) } ?? "")
            if let end, position >= end { return position }
            // The rest of an answer cut after bytes of it were taken combines with them only when
            // something tells the object's versions apart byte for byte.
            if position > start, let risk = identity?.resumptionRisk {
                throw WeirError.cannotResume(url: url, at: position, risk)
            }
            var stopError: WeirError?
            var readerGone = false
            let before = position
            var known = identity
            var checked = false
            let outcome = withoutActuallyEscaping(deliver) { deliver in
                client.get(url, range: range, headers: known?.conditions ?? []) { head, piece in
                    if !checked {
                        checked = true
                        if let problem = check(head, asked: range, at: position, identity: &known) {
                            stopError = problem
                            return false
                        }
                        guard head.status == 200 || head.status == 206 else { return false }
                    }
                    var piece = piece
                    if let end, position + piece.count > end {
                        guard position < end else {
                            stopError = .badAnswer(url: url, "more bytes than asked for \(start)-\(end - 1)")
                            return false
                        }
                        piece = UnsafeRawBufferPointer(rebasing: piece[..<(end - position)])
                    }
                    if let limit = Self.limit(of: head, size: known?.size), position + piece.count > limit {
                        stopError = .badAnswer(url: url, "more bytes than \(Self.described(head, size: known?.size))")
                        return false
                    }
                    position += piece.count
                    if !deliver(piece) {
                        readerGone = true
                        return false
                    }
                    return true
                }
            }
            identity = known
            if readerGone { return position }
            if let stopError { throw stopError }
            if position > before { tries = 1 }
            let status = outcome.head.status
            // A stream ends at the object's size (the first answer's), when it said one.
            let last = end ?? identity.flatMap { $0.size >= 0 ? $0.size : nil }
            if outcome.code == CURLE_OK, status == 200 || status == 206 {
                if last == nil || position == last { return position }
                // Fewer bytes than asked, and some (a server may send less): the rest asked at once.
                if position > before { continue }
            }
            try Self.retryOrThrow(outcome, tries: tries, attempts: total, reached: position, url: url,
                                  size: end == nil ? last : nil)
        }
    }

    /// After a try that did not bring all it asked for (`reached`: the
    /// offset its bytes came to): throws what ends the transfer — a status
    /// that does not pass, a libcurl failure that does not, the last of
    /// ``triesInARow`` tries in a row — else waits before the next try
    /// (``firstPause``, doubling up to ``longestPause``).
    static func retryOrThrow(_ outcome: HTTPClient.Outcome, tries: Int, attempts: Int, reached: Int,
                             url: String, size: Int? = nil) throws(WeirError) {
        let status = outcome.head.status
        let complete = outcome.code == CURLE_OK && (status == 200 || status == 206)
        if !complete, (300 ... 399).contains(status) {
            // A redirect libcurl did not follow: a loop, or a scheme other than http and https.
            throw WeirError.redirectFailed(url: url, head: outcome.head, code: outcome.code, message: outcome.message)
        }
        if !complete, status != 0, status != 200, status != 206 {
            // The answer was a status of its own (the body callback stopped it, or none came).
            if let failure = failure(status: status, head: outcome.head, url: url, tries: attempts) { throw failure }
        } else if !complete, !passing.contains(outcome.code.rawValue) {
            throw WeirError.transferFailed(url: url, message: outcome.message, attempts: attempts)
        }
        guard tries < triesInARow else {
            if !complete, status == 200 || status == 206 || status == 0 {
                throw WeirError.transferFailed(url: url, message: outcome.message, attempts: attempts)
            }
            if complete {
                throw WeirError.shortBody(url: url, at: reached, size: size, head: outcome.head, attempts: attempts)
            }
            throw WeirError.httpStatus(url: url, status: status, reason: outcome.head.reason, attempts: attempts)
        }
        usleep(UInt32(min(longestPause, firstPause << min(tries - 1, 10))) * 1000)
    }

    /// The error of an answer's first piece that cannot be used: another
    /// object, a whole object where a part was asked, a part that does not
    /// start where asked. Sets `identity` from the first answer.
    private func check(_ head: HTTPHead, asked range: String?, at position: Int,
                       identity: inout ObjectIdentity?) -> WeirError? {
        if head.status == 200 || head.status == 206 {
            if let problem = head.unreadable { return .badAnswer(url: url, problem) }
            if let coding = head.coding { return .codedBody(url: url, coding) }
        }
        switch head.status {
        case 206:
            guard let parsed = head.contentRange, let part = parsed.range else {
                let field = head.fields["content-range"].map { "an unreadable Content-Range: \($0)" }
                return .badAnswer(url: url, "206 with " + (field ?? "no Content-Range")
                    + " to Range: bytes=\(range ?? "")")
            }
            if let identity, let what = identity.difference(from: head) { return .remoteChanged(url: url, what) }
            guard part.lowerBound == position else {
                return .badAnswer(url: url, "asked from offset \(position), sent from \(part.lowerBound)")
            }
            if identity == nil { identity = ObjectIdentity(head: head, size: parsed.total ?? -1) }
        case 200:
            if range != nil {
                if let identity, let what = identity.difference(from: head) {
                    return .remoteChanged(url: url, what)
                }
                return .rangesUnsupported(url: url, status: 200)
            }
            if let identity {
                // A stream of an object whose size an earlier answer said.
                if let what = identity.difference(from: head) { return .remoteChanged(url: url, what) }
            } else {
                identity = ObjectIdentity(head: head, size: head.contentLength ?? -1)
            }
        default:
            break
        }
        return nil
    }

    /// The offset an answer's body must not go past: a 206's Content-Range
    /// end, else the object's `size` when known; nil when neither says.
    private static func limit(of head: HTTPHead, size: Int?) -> Int? {
        if head.status == 206, let part = head.contentRange?.range { return part.upperBound }
        return size.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// What ``limit(of:size:)`` took the end from, for a message.
    private static func described(_ head: HTTPHead, size: Int?) -> String {
        if head.status == 206, let value = head.fields["content-range"] { return "its Content-Range: \(value)" }
        return "the object's size, \(size ?? -1) bytes"
    }

    /// The error of a status: nil for those that may pass (408, 429, 5xx).
    static func failure(status: Int, head: HTTPHead, url: String, tries: Int) -> WeirError? {
        switch status {
        case 408, 429, 500 ... 599: return nil
        case 412: return .remoteChanged(url: url, "the server answered 412 \(head.reason) to If-Match")
        case 416: return .remoteChanged(url: url, "the server answered 416 \(head.reason): it is shorter")
        default: return .httpStatus(url: url, status: status, reason: head.reason, attempts: tries)
        }
    }
}
