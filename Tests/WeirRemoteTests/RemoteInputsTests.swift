import Testing
@testable import WeirRemote

/// The names of remote inputs (the command's tests read them over a server).
struct RemoteInputsTests {
    @Test func urlsAreTheirSchemes() {
        #expect(RemoteInputs.isURL("http://h/a.zst"))
        #expect(RemoteInputs.isURL("HTTPS://h/a.zst"))
        #expect(!RemoteInputs.isURL("ftp://h/a.zst"))
        #expect(!RemoteInputs.isURL("http:/a.zst"))
    }

    @Test func objectNameIsThePathsLastPart() {
        #expect(RemoteInputs.objectName("https://host/a/b.tar.zst?sig=x&y=/z") == "b.tar.zst")
        #expect(RemoteInputs.objectName("http://host:8080/b.zst#frag") == "b.zst")
        #expect(RemoteInputs.objectName("http://host/") == nil)
        #expect(RemoteInputs.objectName("http://host") == nil)
        #expect(RemoteInputs.objectName("http://host/a/..") == nil)
    }

    @Test func headParsesContentRangeAndForgetsRedirects() {
        var head = HTTPHead()
        head.take(line: "HTTP/1.1 302 Found\r\n")
        head.take(line: "Location: /x\r\n")
        head.take(line: "HTTP/1.1 206 Partial Content\r\n")
        head.take(line: "Content-Range: bytes 10-19/100\r\n")
        head.take(line: "ETag: \"abc\"\r\n")
        #expect(head.status == 206)
        #expect(head.reason == "Partial Content")
        #expect(head.fields["location"] == nil)
        #expect(head.contentRange?.range == 10 ..< 20)
        #expect(head.contentRange?.total == 100)
        #expect(ObjectIdentity(head: head, size: 100).conditions == ["If-Match: \"abc\""])
    }
}
