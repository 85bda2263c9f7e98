import Testing
import WeirCLI

@Suite("FileStatTraceLine")
struct FileStatTraceLineTests {
    @Test("zstd's lines: a check entered and its result, one space deeper per nested check")
    func lines() {
        #expect(FileStatTraceLine.enter("UTIL_isConsole(2)", depth: 0) == "Trace:FileStat: > UTIL_isConsole(2)\n")
        #expect(FileStatTraceLine.result(0, depth: 0) == "Trace:FileStat: < 0\n")
        #expect(FileStatTraceLine.enter("UTIL_stat(file)", depth: 1) == "Trace:FileStat:  > UTIL_stat(file)\n")
        #expect(FileStatTraceLine.result(-1, depth: 2) == "Trace:FileStat:   < -1\n")
    }
}
