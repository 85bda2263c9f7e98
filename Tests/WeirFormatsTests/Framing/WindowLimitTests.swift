import Testing
@testable import WeirFormats
@testable import WeirSystem

@Suite("Window limit")
struct WindowLimitTests {
    static func header(window: UInt64, singleSegment: Bool = false) -> FrameHeader {
        FrameHeader(kind: .zstd, headerSize: 6, contentSize: singleSegment ? window : nil, windowSize: window,
                    hasChecksum: true, dictionaryID: 0, isSingleSegment: singleSegment)
    }

    @Test("a window up to the limit passes, one byte more is refused with the -M that would do")
    func exactLimit() throws {
        let limit = WindowLimit(memoryLimit: 65536)
        try limit.check(Self.header(window: 65536), index: 0, offset: 0, path: "x.zst")
        do throws(WeirError) {
            try limit.check(Self.header(window: 675_440, singleSegment: true), index: 3, offset: 1234, path: "x.zst")
            Issue.record("a 675440-byte window passed a 64 KiB limit")
        } catch {
            #expect(error.kind == .memoryLimit)
            #expect(error.description == "x.zst: frame 3 at offset 1234 needs a window of 675440 bytes, more than "
                        + "the memory limit of 65536 bytes")
            #expect(error.hint == .windowLimit(log: 20, bytes: 675_440))
        }
        #expect(throws: WeirError.self) { try limit.check(Self.header(window: 65537), index: 0, offset: 0, path: "x") }
        // Skippable frames have no window.
        let skippable = FrameHeader(kind: .skippable(nibble: 0), headerSize: 8, contentSize: nil, windowSize: 0,
                                    hasChecksum: false, dictionaryID: 0, isSingleSegment: false)
        try WindowLimit(memoryLimit: 0).check(skippable, index: 0, offset: 0, path: "x")
    }

    @Test("without -M, libzstd's default of 128 MiB; every limit allows the format's 1 KiB")
    func defaults() throws {
        let standard = WindowLimit(memoryLimit: nil)
        #expect(standard.bytes == 1 << 27 && standard.logMax == 27)
        try standard.check(Self.header(window: 1 << 27), index: 0, offset: 0, path: "x")
        do throws(WeirError) {
            try standard.check(Self.header(window: 1 << 28), index: 0, offset: 0, path: "x")
            Issue.record("a 256 MiB window passed the default limit")
        } catch {
            #expect(error.reason.hasSuffix("more than the default memory limit of 134217728 bytes"))
            #expect(error.hint == .windowLimit(log: 28, bytes: 1 << 28))
        }
        let tiny = WindowLimit(memoryLimit: 100)
        #expect(tiny.bytes == 1024 && tiny.logMax == 10)
        try tiny.check(Self.header(window: 1024), index: 0, offset: 0, path: "x")
    }

    @Test("--long=N without -M allows 2^N, as zstd -d --long=N; -M wins over it")
    func longWindow() throws {
        let long = WindowLimit(memoryLimit: nil, longWindowLog: 28)
        #expect(long.bytes == 1 << 28 && long.logMax == 28)
        try long.check(Self.header(window: 1 << 28), index: 0, offset: 0, path: "x")
        #expect(throws: WeirError.self) { try long.check(Self.header(window: 1 << 29), index: 0, offset: 0, path: "x") }
        #expect(WindowLimit(memoryLimit: 1 << 20, longWindowLog: 28).bytes == 1 << 20)
        #expect(WindowLimit(memoryLimit: nil, longWindowLog: 30).bytes == 1 << 30)
        // A window no --long can give is named as such.
        do throws(WeirError) {
            try long.check(Self.header(window: 1 << 33), index: 0, offset: 0, path: "x")
        } catch {
            #expect(error.reason.hasSuffix("(a window log above 31 is not supported)"))
        }
    }

    @Test("the --long=N hint is the smallest N whose window holds the frame's")
    func windowLog() {
        #expect(WindowLimit.windowLog(1 << 27) == 27)
        #expect(WindowLimit.windowLog((1 << 27) + 1) == 28)
        #expect(WindowLimit.windowLog(500_000) == 19)
        #expect(WindowLimit.windowLog(1024) == 10)
    }

    @Test("libzstd's window log is at or above the limit, so it never refuses what the check allows")
    func logMax() {
        #expect(WindowLimit(memoryLimit: 64 << 10).logMax == 16)
        #expect(WindowLimit(memoryLimit: (64 << 10) + 1).logMax == 17)
        #expect(WindowLimit(memoryLimit: 1000 << 10).logMax == 20)
        #expect(WindowLimit(memoryLimit: 1 << 40).logMax == 31)
    }
}
