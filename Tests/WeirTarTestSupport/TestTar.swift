import Dispatch
import Foundation
import WeirTar

/// A tar GNU tar makes, and its members' records found by hand from its
/// headers (not by the scanner under test): what the tests of a tar stream
/// (WeirTarTests) and of TarArchive (WeirTests) read.
enum TestTar {
    /// The tar of a folder `d` holding `a.txt` ("alpha\n") and `b.txt`
    /// (`content`), pax format, and its members' records.
    static func paxFolder(b content: [UInt8]) throws -> (bytes: [UInt8], members: [MemberIndex.Member]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("d"),
                                                withIntermediateDirectories: true)
        try Data("alpha\n".utf8).write(to: folder.appendingPathComponent("d/a.txt"))
        try Data(content).write(to: folder.appendingPathComponent("d/b.txt"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        process.arguments = ["--format=pax", "--sort=name", "-cf", "a.tar", "d"]
        process.currentDirectoryURL = folder
        try process.run()
        process.waitUntilExit()
        let bytes = Array(try Data(contentsOf: folder.appendingPathComponent("a.tar")))
        // The members where GNU tar put them: pax headers (x block + records) before each.
        var members: [MemberIndex.Member] = []
        var at = 0
        for (name, size) in [("d/", 0), ("d/a.txt", 6), ("d/b.txt", content.count)] {
            let own = bytes.withUnsafeBytes { all in
                TarHeaderCheck.number(UnsafeRawBufferPointer(rebasing: all[at + 124 ..< at + 136])) ?? 0
            }
            let headerLength = 512 + (own + 511) / 512 * 512 + 512
            members.append(MemberIndex.Member(headerOffset: at, headerLength: headerLength,
                                              dataLength: (size + 511) / 512 * 512, size: size,
                                              type: UInt8(ascii: name.hasSuffix("/") ? "5" : "0"),
                                              path: Array(name.utf8)))
            at = members[members.count - 1].end
        }
        return (bytes, members)
    }

    /// The member index one walk of all of `tar` gives (``TarScanner``), as
    /// its frame's bytes; nil when it gives none: what the chunks' walks put
    /// together must equal. Its blocks close at `blockBytes` of raw columns.
    static func scannedIndex(_ tar: [UInt8], blockBytes: Int = MemberIndex.blockBytes) throws -> [UInt8]? {
        let scanner = TarScanner(blockBytes: blockBytes)
        tar.withUnsafeBytes { bytes in
            var data = DispatchData.empty
            data.append(bytes)
            scanner.feed(data)
        }
        return try scanner.finish(contentSize: tar.count, path: "a.tar.zst")?.frame.bytes(path: "a.tar.zst")
    }
}
