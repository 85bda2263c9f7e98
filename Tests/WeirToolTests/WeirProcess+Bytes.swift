import Foundation
import Glibc

/// Running weir with arguments given as bytes, and the file system seen as
/// bytes: `Process` and `FileManager` take and give Swift `String`s, which
/// cannot hold a name that is not UTF-8.
extension WeirProcess {
    /// Runs `weir arguments…` in `folder`, each argument passed to `posix_spawn`
    /// as the exact bytes given; standard input is /dev/null.
    static func run(bytes arguments: [[UInt8]], in folder: URL, timeout: TimeInterval = 60) throws -> Result {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("weir-stdout-\(UUID())").path
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("weir-stderr-\(UUID())").path
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The shell changes to `folder` and execs weir with its positional
        // parameters, which it passes on byte for byte (Glibc's module does
        // not offer posix_spawn_file_actions_addchdir_np).
        let command = ["/bin/sh", "-c", "cd \"$1\" && shift && exec \"$0\" \"$@\"", binary, folder.path]
        let strings = (command.map { Array($0.utf8) } + arguments).map { bytes -> UnsafeMutablePointer<CChar> in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            pointer[bytes.count] = 0
            return pointer
        }
        defer { for pointer in strings { pointer.deallocate() } }
        var argv: [UnsafeMutablePointer<CChar>?] = strings + [nil]
        var pid: pid_t = 0
        let code = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ)
        guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw TimedOut(arguments: arguments.map { String(decoding: $0, as: UTF8.self) })
            }
            usleep(10_000)
        }
        let signaled = status & 0x7F != 0
        return Result(status: signaled ? status & 0x7F : (status >> 8) & 0xFF, signaled: signaled,
                      stdout: try Data(contentsOf: URL(fileURLWithPath: out)),
                      stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: err)), as: UTF8.self))
    }
}

extension Scratch {
    /// The path of the entry `name` here, as bytes.
    func path(bytes name: [UInt8]) -> [UInt8] { Array(url.path.utf8) + [UInt8(ascii: "/")] + name }

    /// Creates the file `name` (any bytes but NUL and `/`) holding `contents`.
    func create(bytes name: [UInt8], contents: [UInt8]) {
        let fd = withPath(name) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        precondition(fd >= 0, "cannot create a test file")
        contents.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// The contents of the file `name`, or nil when it cannot be opened.
    func contents(bytes name: [UInt8]) -> [UInt8]? {
        let fd = withPath(name) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got <= 0 { return contents }
            contents += buffer[0 ..< got]
        }
    }

    /// Every entry of the folder as the bytes `readdir` gives, sorted.
    var entries: [[UInt8]] {
        guard let directory = opendir(url.path) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    private func withPath<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (path(bytes: name) + [0]).withUnsafeBytes { body($0.bindMemory(to: CChar.self).baseAddress!) }
    }
}
