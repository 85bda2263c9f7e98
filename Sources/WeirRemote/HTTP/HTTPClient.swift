import CCurl
import Glibc
import WeirSystem

/// GET requests through libcurl, on reused connections: each request takes
/// an idle easy handle (with its connections kept alive) from the pool, or
/// makes one, and gives it back when done, so a thread at a time uses a
/// handle and sequential requests reuse one connection.
///
/// Every handle follows redirects (http and https only), verifies TLS
/// (libcurl's defaults), takes proxies from the environment as libcurl
/// does (`http_proxy`, `https_proxy`, `no_proxy`), and the CA bundle as the
/// curl program does (`CURL_CA_BUNDLE`, else `SSL_CERT_FILE`; `SSL_CERT_DIR`).
/// A connection that makes no progress for `stallSeconds` is a timeout.
package final class HTTPClient: Sendable {
    /// What a transfer came to.
    package struct Outcome {
        /// The last response's head (after redirects).
        package var head: HTTPHead
        /// libcurl's result; CURLE_WRITE_ERROR when the body callback stopped it.
        package var code: CURLcode
        /// libcurl's words for `code` and its error buffer, when it failed.
        package var message: String
        /// Whether the body callback stopped the transfer.
        package var stopped: Bool
    }

    /// One easy handle and its error buffer; used by one thread at a time
    /// (taken from the pool, given back), hence unchecked.
    private final class Handle: @unchecked Sendable {
        let curl: UnsafeMutableRawPointer
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

        init?() {
            guard HTTPClient.initialized, let curl = weir_curl_easy_init() else { return nil }
            self.curl = curl
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
            weir_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 1)
            weir_curl_set_long(curl, CURLOPT_MAXREDIRS, HTTPClient.redirectsFollowed)
            weir_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https")
            weir_curl_set_string(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            // Threads: no signal for timeouts (libcurl's resolver then blocks them).
            weir_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
            weir_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT, HTTPClient.stallSeconds)
            weir_curl_set_long(curl, CURLOPT_LOW_SPEED_LIMIT, 1)
            weir_curl_set_long(curl, CURLOPT_LOW_SPEED_TIME, HTTPClient.stallSeconds)
            weir_curl_set_string(curl, CURLOPT_USERAGENT, "weir")
            weir_curl_set_long(curl, CURLOPT_BUFFERSIZE, HTTPClient.receiveBufferSize)
            let environment = ProcessEnvironment.self
            if let bundle = environment.value("CURL_CA_BUNDLE") ?? environment.value("SSL_CERT_FILE") {
                weir_curl_set_string(curl, CURLOPT_CAINFO, bundle)
            }
            if let folder = environment.value("SSL_CERT_DIR") { weir_curl_set_string(curl, CURLOPT_CAPATH, folder) }
            weir_curl_set_pointer(curl, CURLOPT_ERRORBUFFER, errorBuffer)
            weir_curl_watch_abandon(curl)
        }

        deinit {
            weir_curl_easy_cleanup(curl)
            errorBuffer.deallocate()
        }
    }

    /// The state of one transfer, which libcurl's callbacks reach through
    /// their user pointer; lives on the calling thread's stack frame.
    private final class Transfer {
        var head = HTTPHead()
        var stopped = false
        let body: (HTTPHead, UnsafeRawBufferPointer) -> Bool

        init(body: @escaping (HTTPHead, UnsafeRawBufferPointer) -> Bool) { self.body = body }
    }

    /// Seconds without a byte before a connection or a transfer is given up
    /// (then retried): `WEIR_HTTP_STALL_SECONDS`, else 30.
    static let stallSeconds: Int = ProcessEnvironment.value("WEIR_HTTP_STALL_SECONDS").flatMap { Int($0) } ?? 30

    /// The most redirects followed in a row (libcurl's CURLOPT_MAXREDIRS).
    static let redirectsFollowed = 20

    /// The bytes a handle receives at once: libcurl's 16 KiB cost a poll,
    /// a receive and a wake-up per 16 KiB of a body, on the cores the
    /// decoders need (the curl program takes 100 KiB). One such buffer per
    /// handle, a handle per fetching thread.
    static let receiveBufferSize = 256 << 10

    /// libcurl's global set-up, done once before the first handle.
    private static let initialized = weir_curl_global_init() == CURLE_OK

    private let idle = Locked<[Handle]>([])

    package init() {}

    /// Ends every transfer under way, and each one started later, within
    /// a second (a stalled one too, rather than at its stall timeout): it
    /// fails, and is not tried again. For a process that is stopping
    /// (`weir mount` on SIGTERM); async-signal-safe.
    package static func abandonAll() { weir_curl_abandon_all() }

    /// GETs `url`, with `Range: bytes=RANGE` when `range` is given and the
    /// extra header lines `headers`; hands `body` each piece of the final
    /// response's body with its head, until it returns false (which stops
    /// the transfer). Blocks the calling thread.
    package func get(_ url: String, range: String?, headers: [String],
                     body: @escaping (HTTPHead, UnsafeRawBufferPointer) -> Bool) -> Outcome {
        guard let handle = idle.withLock({ $0.popLast() }) ?? Handle() else {
            let why = String(cString: weir_curl_load_error())
            return Outcome(head: HTTPHead(), code: CURLE_FAILED_INIT,
                           message: why.isEmpty ? "cannot start libcurl" : why, stopped: false)
        }
        defer { idle.withLock { $0.append(handle) } }
        let curl = handle.curl
        let transfer = Transfer(body: body)
        // The object's own bytes, never a coding of them (RFC 9110 12.5.3: a
        // request without the field accepts any): a range of a coded body
        // is not a range of the object. An answer coded all the same is refused.
        var list = weir_curl_slist_append(nil, "Accept-Encoding: identity")
        for header in headers { list = weir_curl_slist_append(list, header) }
        defer { weir_curl_slist_free_all(list) }
        handle.errorBuffer[0] = 0
        weir_curl_set_string(curl, CURLOPT_URL, url)
        weir_curl_set_string(curl, CURLOPT_RANGE, range)
        weir_curl_set_pointer(curl, CURLOPT_HTTPHEADER, list)
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        weir_curl_set_pointer(curl, CURLOPT_WRITEDATA, user)
        weir_curl_set_pointer(curl, CURLOPT_HEADERDATA, user)
        weir_curl_set_callback(curl, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            guard let data, let user else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
            transfer.head.take(line: UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        weir_curl_set_callback(curl, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            guard let data, let user else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
            guard transfer.body(transfer.head, UnsafeRawBufferPointer(start: data, count: size * count)) else {
                transfer.stopped = true
                return 0
            }
            return size * count
        }
        let code = withExtendedLifetime(transfer) { weir_curl_easy_perform(curl) }
        weir_curl_set_pointer(curl, CURLOPT_HTTPHEADER, nil)
        var message = ""
        if code != CURLE_OK {
            let detail = String(cString: handle.errorBuffer)
            message = String(cString: weir_curl_easy_strerror(code)) + (detail.isEmpty ? "" : ": \(detail)")
        }
        return Outcome(head: transfer.head, code: code, message: message, stopped: transfer.stopped)
    }
}
