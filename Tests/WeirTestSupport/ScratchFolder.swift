import Foundation

/// A scratch folder for one test, removed when the test lets go of it.
final class ScratchFolder: Sendable {
    let url = TestData.temporaryFolder()
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func write(_ name: String, _ bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: path(name), contents: Data(bytes))
    }
}
