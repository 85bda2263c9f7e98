import Testing
import WeirPipeline

/// Physical cores counted from /proc/cpuinfo as zstd counts them.
@Suite("Core count")
struct CoreCountTests {
    @Test("two threads per core halve the count; one per core, or no information, leave it")
    func physical() {
        let smt = "processor\t: 0\nsiblings\t: 8\ncore id\t\t: 0\ncpu cores\t: 4\n\nprocessor\t: 1\nsiblings\t: 8\n"
        #expect(CoreCount.physical(cpuinfo: smt, logical: 8) == 4)
        #expect(CoreCount.physical(cpuinfo: "siblings\t: 2\ncpu cores\t: 2\n", logical: 2) == 2)
        #expect(CoreCount.physical(cpuinfo: "processor\t: 0\n", logical: 3) == 3)
        // zstd divides only when there are more logical cores than the ratio.
        #expect(CoreCount.physical(cpuinfo: smt, logical: 2) == 2)
    }

    @Test("this machine: at least one physical core, never more than the logical ones")
    func thisMachine() {
        #expect(CoreCount.physical >= 1)
        #expect(CoreCount.physical <= CoreCount.logical)
    }
}
