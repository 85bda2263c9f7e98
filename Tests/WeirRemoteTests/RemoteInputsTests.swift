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

    @Test("""
          an answer is the object's when it repeats what the requests carried: a strong ETag exactly (not its \
          weak form), the Last-Modified date where that is the condition; a weak tag cannot be resumed under
          """)
    func identityAcrossAnswers() {
        func head(_ lines: [String]) -> HTTPHead {
            var head = HTTPHead()
            head.take(line: "HTTP/1.1 206 Partial Content\r\n")
            for line in lines { head.take(line: line + "\r\n") }
            return head
        }
        let strong = ObjectIdentity(head: head(["ETag: \"1\""]), size: 10)
        #expect(strong.difference(from: head(["ETag: \"1\""])) == nil)
        #expect(strong.difference(from: head(["ETag: W/\"1\""])) == "its ETag was \"1\", now W/\"1\"")
        #expect(strong.difference(from: head([])) == "its ETag was \"1\", now none")
        #expect(strong.resumptionRisk == nil)
        let dated = ObjectIdentity(head: head(["Last-Modified: Sun, 01 Jan 2023 00:00:00 GMT"]), size: 10)
        #expect(dated.conditions == ["If-Range: Sun, 01 Jan 2023 00:00:00 GMT"])
        #expect(dated.difference(from: head(["Last-Modified: Sun, 01 Jan 2023 00:00:00 GMT"])) == nil)
        #expect(dated.difference(from: head([]))?.contains("now none") == true)
        let weak = ObjectIdentity(head: head(["ETag: W/\"1\""]), size: 10)
        #expect(weak.difference(from: head(["ETag: \"1\""])) == nil)
        #expect(weak.resumptionRisk == "only a weak ETag (W/\"1\")")
        #expect(ObjectIdentity(head: head([]), size: 10).resumptionRisk != nil)
    }

    @Test func headLinesAsServersSendThem() {
        var head = HTTPHead()
        head.take(line: "HTTP/2 200\r\n")
        #expect(head.status == 200)
        #expect(head.reason == "")
        head.take(line: "HTTP/1.1  404   Not  Found \r\n")
        #expect(head.status == 404)
        #expect(head.reason == "Not  Found")
        // Names in any case, the value trimmed of spaces and tabs, a colon in the value kept.
        head.take(line: "Last-MODIFIED:\t Tue, 03 Nov 2026 10:00:00 GMT \t\r\n")
        head.take(line: "x-empty:\r\n")
        head.take(line: "no colon here\r\n")
        head.take(line: "\r\n")
        #expect(head.fields == ["last-modified": "Tue, 03 Nov 2026 10:00:00 GMT", "x-empty": ""])
        // A line that is not UTF-8 is taken as it decodes, never refused.
        let bytes: [UInt8] = Array("ETag: \"".utf8) + [0xFF] + Array("\"\r\n".utf8)
        bytes.withUnsafeBytes { head.take(line: $0) }
        #expect(head.fields["etag"] == "\"\u{FFFD}\"")
    }

    /// RFC 9110 5.3: a field in two lines is one list; RFC 9112 5.1: a
    /// field name with whitespace before its colon makes the response one
    /// to reject (it is not read as the field the name would be).
    @Test func repeatedFieldsAreOneListAndSpaceBeforeColonIsUnreadable() {
        var head = HTTPHead()
        head.take(line: "HTTP/1.1 200 OK\r\n")
        head.take(line: "Content-Encoding: gzip\r\n")
        head.take(line: "content-encoding: identity\r\n")
        head.take(line: "Content-Length: 7\r\n")
        head.take(line: "Content-Length: 7\r\n")
        #expect(head.fields["content-encoding"] == "gzip, identity")
        #expect(head.coding == "Content-Encoding: gzip, identity")
        #expect(head.contentLength == 7)
        #expect(head.unreadable == nil)
        head.take(line: "Content-Length: 8\r\n")
        #expect(head.contentLength == nil)
        var spaced = HTTPHead()
        spaced.take(line: "HTTP/1.1 200 OK\r\n")
        spaced.take(line: "Content-Encoding : gzip\r\n")
        #expect(spaced.unreadable?.contains("Content-Encoding : gzip") == true)
        spaced.take(line: "HTTP/1.1 200 OK\r\n")
        spaced.take(line: "Content-Encoding\t: gzip\r\n")
        #expect(spaced.unreadable != nil)
    }
}

extension HTTPHead {
    /// Takes one header line written as text, as the client takes its bytes.
    mutating func take(line: String) {
        var line = line
        line.withUTF8 { take(line: UnsafeRawBufferPointer($0)) }
    }
}
