import Foundation
import Testing
@testable import WeirTar
@testable import WeirTestSupport

/// The check of a member's header blocks against the index, on archives GNU tar made.
@Suite("Tar header check")
struct TarHeaderCheckTests {
    /// `tar --format=FORMAT -cf` of one file named `name` (under a folder
    /// made for it); the archive's bytes.
    static func archive(format: String, name: String) throws -> [UInt8] {
        let folder = TestData.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try Data("contents\n".utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        process.arguments = ["--format=\(format)", "-cf", "a.tar", name]
        process.currentDirectoryURL = folder
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return Array(try Data(contentsOf: folder.appendingPathComponent("a.tar")))
    }

    @Test("""
          pax and GNU long names, ustar's prefix: the header blocks \
          name the path; another path, a flipped byte refused
          """)
    func checks() throws {
        let long = String(repeating: "n", count: 120) + "/" + String(repeating: "m", count: 150) + ".txt"
        let ustarLong = String(repeating: "p", count: 120) + "/file.txt"
        // The header blocks of the one file: pax's x header and its record block, GNU's L header and name block.
        for (format, name, blocks) in [("pax", long, 3), ("gnu", long, 3), ("ustar", ustarLong, 1),
                                       ("gnu", "short.txt", 1)] {
            var bytes = try Self.archive(format: format, name: name)
            let header = Array(bytes.prefix(blocks * 512))
            header.withUnsafeBytes { all in
                #expect(TarHeaderCheck.problem(in: all, path: Array(name.utf8)) == nil, "\(format) \(name.count)")
                let other = TarHeaderCheck.problem(in: all, path: Array("other".utf8))
                #expect(other?.contains("its header names") == true, "\(format): \(other ?? "")")
                // One block too few, or too many: not the member's header blocks.
                #expect(TarHeaderCheck.problem(in: UnsafeRawBufferPointer(rebasing: all.dropLast(512)),
                                               path: Array(name.utf8)) != nil)
            }
            let withData = Array(bytes.prefix(blocks * 512 + 512))
            withData.withUnsafeBytes { all in
                #expect(TarHeaderCheck.problem(in: all, path: Array(name.utf8)) != nil, "\(format): data as header")
            }
            bytes[blocks * 512 - 512 + 5] ^= 0x01
            bytes.prefix(blocks * 512).withUnsafeBytes { all in
                let flipped = TarHeaderCheck.problem(in: UnsafeRawBufferPointer(all), path: Array(name.utf8))
                #expect(flipped?.contains("checksum") == true, "\(format): \(flipped ?? "")")
            }
        }
    }

    @Test("""
          a GNU long name and a pax path on one member (GNU tar takes the pax path, python the long name): no \
          index, and the check refuses such blocks whichever name a record gives
          """)
    func paxPathOverLongName() throws {
        let gnuName = String(repeating: "g", count: 120) + ".txt"
        let paxName = String(repeating: "x", count: 130) + ".txt"
        // GNU's L header and its name block, then pax's x header, its record block, the ustar block, the data.
        let gnu = try Self.archive(format: "gnu", name: gnuName)
        let pax = try Self.archive(format: "pax", name: paxName)
        let tar = Array(gnu.prefix(1024)) + Array(pax.prefix(2048)) + [UInt8](repeating: 0, count: 1024)
        var walk = TarWalk(sink: TarSparseMapTests.Collector())
        tar.withUnsafeBytes { walk.consume($0, at: 0) }
        walk.finish(contentSize: tar.count)
        #expect(walk.stop?.clean == false)
        tar.prefix(2560).withUnsafeBytes { header in
            for name in [paxName, gnuName] {
                let problem = MemberRecordCheck.problem(in: header, path: Array(name.utf8), type: UInt8(ascii: "0"),
                                                        link: [], dataLength: 512, size: 9)
                #expect(problem != nil, "\(name.prefix(4))")
            }
        }
    }
}
