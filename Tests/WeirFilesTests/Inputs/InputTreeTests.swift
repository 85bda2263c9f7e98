import Foundation
import Glibc
import Testing
@testable import WeirFiles
@testable import WeirSystem

@Suite("Expanding -r, naming outputs in folders")
struct InputTreeTests {
    @Test("--output-dir-flat keeps the name after the last slash, in the folder given")
    func flatNames() {
        #expect(OutputName.placed("t/a/f1.zst", in: "out") == "out/f1.zst")
        #expect(OutputName.placed("f1.zst", in: "out/") == "out/f1.zst")
        #expect(OutputName.placed("/abs/x.tar", in: "/o") == "/o/x.tar")
    }

    @Test("--output-dir-mirror: the input's folder under the root, less ./ and /; .. refused")
    func mirroredFolders() {
        #expect(OutputName.mirroredFolder(for: "t/a/f1", root: "mir") == "mir/t/a")
        #expect(OutputName.mirroredFolder(for: "./t/f1", root: "mir/") == "mir/t")
        #expect(OutputName.mirroredFolder(for: "/tmp/x/f", root: "m") == "m/tmp/x")
        #expect(OutputName.mirroredFolder(for: "f", root: "m") == "m")
        #expect(OutputName.mirroredFolder(for: "../t/f", root: "m") == nil)
        #expect(OutputName.mirroredFolder(for: "t/../f", root: "m") == nil)
        #expect(OutputName.mirroredFolder(for: "t/..x/f", root: "m") == "m/t/..x")
    }

    @Test("expansion leaves weir's temporaries out (a stale one would be swept while it runs), other hidden names in")
    func temporariesLeftOut() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tree-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/d", withIntermediateDirectories: true)
        for name in ["d/.weir-abcdef", "d/.weir-abc", "d/f", ".weir-given0"] {
            _ = FileManager.default.createFile(atPath: root + "/" + name, contents: Data("1".utf8))
        }
        let expansion = InputTree.expand([root + "/d", root + "/.weir-given0"], followLinks: false)
        #expect(Set(expansion.files) == [root + "/d/.weir-abc", root + "/d/f", root + "/.weir-given0"])
    }

    @Test("expansion leaves out what a stopped run keeps: NAME.part with its record, and records; a .part alone stays")
    func keptPartialsLeftOut() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tree-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/d", withIntermediateDirectories: true)
        for name in ["d/big", "d/big.zst.part", "d/.big.zst.part.resume", "d/other.part", "d/.gone.zst.part.resume",
                     "d/.part.resume", "d/f"] {
            _ = FileManager.default.createFile(atPath: root + "/" + name, contents: Data("1".utf8))
        }
        let expansion = InputTree.expand([root + "/d"], followLinks: false)
        #expect(Set(expansion.files) == [root + "/d/big", root + "/d/other.part", root + "/d/.part.resume",
                                         root + "/d/f"])
    }

    @Test("expansion: folders walked, . and .. and links left out (kept with followLinks), other names as given")
    func expansion() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("weir-tree-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/d/e", withIntermediateDirectories: true)
        for name in ["d/f", "d/.h", "d/e/g", "x"] {
            _ = FileManager.default.createFile(atPath: root + "/" + name, contents: Data("1".utf8))
        }
        symlink(root + "/x", root + "/d/link")
        symlink(root + "/d/e", root + "/d/dirlink")

        let plain = InputTree.expand([root + "/d", "-", root + "/missing"], followLinks: false)
        #expect(Set(plain.files) == [root + "/d/f", root + "/d/.h", root + "/d/e/g", "-", root + "/missing"])
        #expect(plain.files.suffix(2) == ["-", root + "/missing"])
        #expect(plain.warnings.count == 2)
        #expect(plain.errors.isEmpty)

        let followed = InputTree.expand([root + "/d"], followLinks: true)
        #expect(
            Set(followed.files) == [
                root + "/d/f", root + "/d/.h", root + "/d/e/g", root + "/d/link", root + "/d/dirlink/g",
            ])
        #expect(followed.warnings.isEmpty)
    }

    @Test("a file list: one name per line, empty lines left out; an empty list is an error")
    func fileList() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("weir-list-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data("a b\n\nc/d\ne".utf8))
        #expect(try FileList.names(in: path) == ["a b", "c/d", "e"])
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        #expect(throws: WeirError.self) { try FileList.names(in: path) }
    }
}
