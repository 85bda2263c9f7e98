import Foundation

extension TestData {
    /// A sparse file of 30 runs of data with holes between, ending in a
    /// hole (more runs than an `S` header holds: extension blocks), and
    /// GNU tar's archives of it, by format.
    static func sparseArchives() throws -> (file: [UInt8], tars: [(String, [UInt8])]) {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("s.bin")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        var generator = SystemRandomNumberGenerator()
        for run in 0 ..< 30 {
            try handle.seek(toOffset: UInt64(run * 200_000 + run * 777 % 5000))
            try handle.write(contentsOf: Data((0 ..< 3000 + run * 100).map { _ in UInt8.random(in: 1 ... 255,
                                                                                            using: &generator) }))
        }
        try handle.truncate(atOffset: 30 * 200_000 + 123_457)
        try handle.close()
        var tars: [(String, [UInt8])] = []
        for (name, flags) in [("gnu", ["--format=gnu"]), ("pax 0.0", ["--format=pax", "--sparse-version=0.0"]),
                              ("pax 0.1", ["--format=pax", "--sparse-version=0.1"]),
                              ("pax 1.0", ["--format=pax", "--sparse-version=1.0"])] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
            process.arguments = flags + ["--sparse", "-cf", "a.tar", "s.bin"]
            process.currentDirectoryURL = folder
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TarFailed(flags: flags) }
            tars.append((name, Array(try Data(contentsOf: folder.appendingPathComponent("a.tar")))))
        }
        return (Array(try Data(contentsOf: url)), tars)
    }
}

/// GNU tar failed to make one of the sample archives.
private struct TarFailed: Error, CustomStringConvertible {
    let flags: [String]
    var description: String { "tar \(flags.joined(separator: " ")) failed" }
}
