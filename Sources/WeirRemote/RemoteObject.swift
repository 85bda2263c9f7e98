import CCurl
import Glibc
import WeirSystem

/// An object over HTTP(S) read at offsets, through range requests: the
/// ``PositionalSource`` a ``Descriptor`` of the engine reads a remote archive
/// through (its seek table, its member index, its frames), as it would read
/// a file with `pread`.
///
/// Opening it asks for its last ``tailSize`` bytes (`Range: bytes=-N`):
/// the answer gives the object's size (Content-Range), its identity
/// (``ObjectIdentity``), and the bytes that hold the footer, the seek table
/// and usually the member index, so that a listing reads nothing more. A
/// read that starts before the tail and ends in it fetches the bytes
/// between and joins them to the tail (a larger member index: one request
/// more). Reads elsewhere fetch exactly what they ask, unless a
/// ``prefetch(_:)`` fetched it first: the frames a read of the content
/// touches, neighbours merged into one request, up to ``prefetchBudget``
/// bytes kept at once (the oldest dropped first).
///
/// Every request after the first carries the identity, and every answer is
/// checked against it (``RemoteTransfer``): a replaced object fails.
package final class RemoteObject: PositionalSource {
    /// The bytes asked for at opening, from the object's end.
    package static let tailSize = 1 << 20
    /// The most bytes prefetched and kept at once.
    package static let prefetchBudget = 64 << 20
    /// Ranges closer than this are fetched in one request (the bytes between with them).
    static let mergeGap = 64 << 10

    /// Bytes fetched and kept: the tail, never dropped, and the prefetched pieces.
    private struct Kept {
        var tailStart: Int
        var tail: [UInt8]
        var pieces: [(start: Int, bytes: [UInt8])] = []
        var piecesSize = 0

        /// Copies `buffer.count` bytes at `offset` when one kept piece holds them all.
        func copy(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
            if offset >= tailStart, offset + buffer.count <= tailStart + tail.count {
                tail.withUnsafeBytes { all in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[(offset - tailStart)...]
                        .prefix(buffer.count)))
                }
                return true
            }
            for piece in pieces
            where offset >= piece.start && offset + buffer.count <= piece.start + piece.bytes.count {
                piece.bytes.withUnsafeBytes { all in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[(offset - piece.start)...]
                        .prefix(buffer.count)))
                }
                return true
            }
            return false
        }

        /// Whether a kept piece holds `range` whole.
        func holds(_ range: Range<Int>) -> Bool {
            if range.lowerBound >= tailStart, range.upperBound <= tailStart + tail.count { return true }
            return pieces.contains { range.lowerBound >= $0.start && range.upperBound <= $0.start + $0.bytes.count }
        }
    }

    /// The URL, as given.
    package let url: String
    package let size: Int
    /// What the first answer said the object is: a stream of it (``RemoteStream``) is checked against it.
    let identity: ObjectIdentity
    private let transfer: RemoteTransfer
    private let kept: Locked<Kept>

    /// Opens `url`: one request for its tail.
    ///
    /// - Throws: `WeirError` ``WeirError/Kind/remoteFailed`` (an error
    ///   status, a failed transfer), ``WeirError/Kind/rangesUnsupported``
    ///   (the server sends the whole object).
    package init(url: String, client: HTTPClient = HTTPClient()) throws(WeirError) {
        self.url = url
        transfer = RemoteTransfer(client: client, url: url)
        let asked = "-\(Self.tailSize)"
        var tries = 0
        while true {
            tries += 1
            // Room for the whole tail at once: grown as it came, the array
            // was copied and faulted in again at each doubling, on the path
            // to a command's first byte.
            var body: [UInt8] = []
            body.reserveCapacity(Self.tailSize)
            var stopError: WeirError?
            var part: (range: Range<Int>, total: Int)?
            let outcome = client.get(url, range: asked, headers: []) { head, piece in
                if part == nil {
                    guard head.status == 206 else {
                        if head.status == 200 {
                            stopError = head.unreadable.map { .badAnswer(url: url, $0) }
                                ?? head.coding.map { .codedBody(url: url, $0) }
                                ?? .rangesUnsupported(url: url, status: 200)
                        }
                        return false
                    }
                    do throws(WeirError) {
                        part = try Self.tail(of: head, url: url)
                    } catch {
                        stopError = error
                        return false
                    }
                }
                guard let part else { return false }
                guard body.count + piece.count <= part.range.count else {
                    stopError = .badAnswer(url: url, "more bytes than its Content-Range (\(Self.described(part)))")
                    return false
                }
                piece.withMemoryRebound(to: UInt8.self) { body.append(contentsOf: $0) }
                return true
            }
            if let stopError { throw stopError }
            let head = outcome.head
            if part == nil, outcome.code == CURLE_OK, head.status == 206 {
                // A 206 without a body: its head, checked as the first piece's would have been.
                part = try Self.tail(of: head, url: url)
            }
            if let part {
                var identity: ObjectIdentity? = ObjectIdentity(head: head, size: part.total)
                if body.count < part.range.count {
                    // Cut: the rest of the tail from the byte reached, as any transfer is resumed.
                    if outcome.code != CURLE_OK, !RemoteTransfer.passing.contains(outcome.code.rawValue) {
                        throw WeirError.transferFailed(url: url, message: outcome.message, attempts: tries)
                    }
                    try transfer.run(from: part.range.lowerBound + body.count, to: part.range.upperBound,
                                     identity: &identity) { piece in
                        piece.withMemoryRebound(to: UInt8.self) { body.append(contentsOf: $0) }
                        return true
                    }
                }
                guard body.count == part.range.count else {
                    throw WeirError.shortBody(url: url, at: part.range.lowerBound + body.count, attempts: tries)
                }
                size = part.total
                self.identity = ObjectIdentity(head: head, size: part.total)
                kept = Locked(Kept(tailStart: part.range.lowerBound, tail: body))
                return
            }
            // An empty object has no last bytes to send: a 416 says so, or a 200 of none (nginx).
            if head.status == 416 && head.contentRange?.total == 0
                || outcome.code == CURLE_OK && head.status == 200 && head.contentLength == 0 {
                size = 0
                identity = ObjectIdentity(head: head, size: 0)
                kept = Locked(Kept(tailStart: 0, tail: []))
                return
            }
            if head.status == 416 {
                // The first request: nothing was known that could have changed.
                let total = head.contentRange?.total.map { ", and a Content-Range of */\($0)" } ?? ""
                throw WeirError.badAnswer(url: url, "the server answered 416 \(head.reason) to a request for the "
                    + "object's last \(Self.tailSize) bytes (Range: bytes=\(asked))\(total)")
            }
            try RemoteTransfer.retryOrThrow(outcome, tries: tries, attempts: tries, reached: 0, url: url)
        }
    }

    /// The part of the object a 206 to the tail's request holds (its
    /// Content-Range): it must end at the object's end and hold at most
    /// the ``tailSize`` bytes asked for.
    private static func tail(of head: HTTPHead, url: String) throws(WeirError) -> (range: Range<Int>, total: Int) {
        if let problem = head.unreadable { throw WeirError.badAnswer(url: url, problem) }
        if let coding = head.coding { throw WeirError.codedBody(url: url, coding) }
        guard let parsed = head.contentRange, let range = parsed.range, let total = parsed.total else {
            let field = head.fields["content-range"].map { "Content-Range: \($0)" } ?? "no Content-Range"
            throw WeirError.badAnswer(url: url, "a 206 with \(field) to a request for the object's last "
                + "\(tailSize) bytes")
        }
        guard range.upperBound == total, range.count <= tailSize else {
            let what = range.count == total ? "the whole object" : "another part"
            throw WeirError.badAnswer(url: url, "asked for the object's last \(tailSize) bytes, the server sent "
                + "\(what) (206, \(described((range, total))))")
        }
        return (range, total)
    }

    /// A part as Content-Range writes it: `bytes FIRST-LAST/TOTAL`.
    private static func described(_ part: (range: Range<Int>, total: Int)) -> String {
        "Content-Range: bytes \(part.range.lowerBound)-\(part.range.upperBound - 1)/\(part.total)"
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(WeirError) -> Int {
        try read(into: buffer, at: offset) { _ in }
    }

    /// Tells `arrived` of the bytes of a request as they come (a kept
    /// piece's at once): the read-ahead hands them out before the rest.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int,
                      arrived: (Int) -> Void) throws(WeirError) -> Int {
        let wanted = max(0, min(buffer.count, size - offset))
        guard wanted > 0 else { return 0 }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted])
        let tailStart = kept.withLock { $0.tailStart }
        if kept.withLock({ $0.copy(into: target, at: offset) }) {
            arrived(wanted)
            return wanted
        }
        if offset < tailStart, offset + wanted > tailStart {
            // Before the tail and into it (a seek table or member index
            // larger than the tail): the bytes between, joined to the tail.
            let between = try fetch(offset ..< tailStart)
            kept.withLock { kept in
                if kept.tailStart == tailStart {
                    kept.tail = between + kept.tail
                    kept.tailStart = offset
                }
            }
            if kept.withLock({ $0.copy(into: target, at: offset) }) {
                arrived(wanted)
                return wanted
            }
        }
        var filled = 0
        var identity: ObjectIdentity? = self.identity
        // Every piece is of the object the identity names (checked before
        // the first), so what arrived stays good if a later piece fails.
        try transfer.run(from: offset, to: offset + wanted, identity: &identity) { piece in
            UnsafeMutableRawBufferPointer(rebasing: target[filled...]).copyMemory(from: piece)
            filled += piece.count
            arrived(filled)
            return true
        }
        return filled
    }

    package func prefetch(_ ranges: [Range<Int>]) throws(WeirError) {
        var merged: [Range<Int>] = []
        for range in ranges.map({ max(0, $0.lowerBound) ..< min(size, $0.upperBound) }).filter({ !$0.isEmpty })
            .sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound + Self.mergeGap {
                merged[merged.count - 1] = last.lowerBound ..< max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        var budget = Self.prefetchBudget
        for range in merged {
            if kept.withLock({ $0.holds(range) }) { continue }
            // What does not fit is read as it is asked for.
            guard range.count <= budget else { break }
            budget -= range.count
            let bytes = try fetch(range)
            kept.withLock { kept in
                kept.pieces.append((range.lowerBound, bytes))
                kept.piecesSize += bytes.count
                while kept.piecesSize > Self.prefetchBudget, !kept.pieces.isEmpty {
                    kept.piecesSize -= kept.pieces.removeFirst().bytes.count
                }
            }
        }
    }

    /// The bytes of `range`, in one request (more after a failure).
    private func fetch(_ range: Range<Int>) throws(WeirError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var identity: ObjectIdentity? = self.identity
        try transfer.run(from: range.lowerBound, to: range.upperBound, identity: &identity) { piece in
            piece.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
            return true
        }
        guard bytes.count == range.count else {
            throw WeirError.shortBody(url: url, at: range.lowerBound + bytes.count, attempts: 1)
        }
        return bytes
    }
}
