import Dispatch
import Foundation
import Glibc
import SystemPackage
import Testing
@testable import WeirPipeline
@testable import WeirSystem
@testable import WeirTestSupport

@Suite("Run control")
struct RunControlTests {
    /// Found by scripts/fuzz (LeakSanitizer, every successful decoder run):
    /// the stop handler holds the reader and a `wake` that holds the control,
    /// so a run that never failed kept its control, channels and queues alive.
    @Test("a finished run lets go of its control and channels")
    func releasedAfterRun() throws {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("input").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }

        weak var released: RunControl?
        weak var releasedReader: ChunkReader?
        do {
            let control = RunControl(slots: 1)
            let cleanup = DispatchGroup()
            let reader = ChunkReader(input: Descriptor(fd, path: path), kind: InputKind.of(Descriptor(fd, path: "")),
                                     chunkSize: 1 << 20, mapFiles: false,
                                     cleanup: cleanup)
            control.stopOnFailure(reader: reader, writer: nil) { control.slots.signal() }
            let chunk = try reader.start().wait()
            #expect(chunk.data.count == 3)
            try control.closeChannels(reader: reader, writer: nil, cleanup: cleanup)
            released = control
            releasedReader = reader
        }
        #expect(released == nil)
        #expect(releasedReader == nil)
    }
}
