import Foundation
import Glibc

/// Runs the built `weir` binary as a user would: real files, real pipes,
/// stdout and stderr captured in files, a time limit so a hang fails the test.
struct WeirProcess {
    struct Result {
        var status: Int32
        var signaled: Bool
        var stdout: Data
        var stderr: String
    }

    /// The binary: `WEIR_BIN`, or `weir` beside the test bundle.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["WEIR_BIN"] { return path }
        return builtProduct("weir")
    }

    /// The executable `name` of this package, built beside the test bundle.
    static func builtProduct(_ name: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return bundle.appendingPathComponent(name).path
    }

    /// Runs `weir arguments…` in `folder`.
    ///
    /// - Parameters:
    ///   - stdin: a file to read as standard input (nil: /dev/null).
    ///   - stdoutPath: where standard output goes (nil: a temporary file that is read back).
    @discardableResult
    static func run(_ arguments: [String], in folder: URL, stdin: String? = nil, stdoutPath: String? = nil,
                    environment: [String: String] = [:], timeout: TimeInterval = 60,
                    executable: String = binary) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = stdin.map { FileHandle(forReadingAtPath: resolve($0, in: folder))! }
            ?? FileHandle(forReadingAtPath: "/dev/null")!
        let out =
            stdoutPath.map { resolve($0, in: folder) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("weir-stdout-\(UUID())").path
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("weir-stderr-\(UUID())").path
        // open(2), not FileManager.createFile: that would replace a device
        // such as /dev/full with a regular file.
        let outHandle = FileHandle(
            fileDescriptor: open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644), closeOnDealloc: true)
        let errHandle = FileHandle(
            fileDescriptor: open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644), closeOnDealloc: true)
        process.standardOutput = outHandle
        process.standardError = errHandle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TimedOut(arguments: arguments)
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let stdout = stdoutPath == nil ? try Data(contentsOf: URL(fileURLWithPath: out)) : Data()
        let stderr = String(decoding: try Data(contentsOf: URL(fileURLWithPath: err)), as: UTF8.self)
        if stdoutPath == nil { try? FileManager.default.removeItem(atPath: out) }
        try? FileManager.default.removeItem(atPath: err)
        return Result(status: process.terminationStatus,
                      signaled: process.terminationReason == .uncaughtSignal,
                      stdout: stdout, stderr: stderr)
    }

    /// Runs a shell command line (for pipelines and pseudo-terminals), with
    /// `$WEIR` set to the binary.
    ///
    /// The shell starts with SIGPIPE's, SIGINT's and SIGQUIT's default
    /// actions, as a user's does. An ignored signal outlives exec. The test
    /// process ignores SIGPIPE, so a producer whose reader had finished
    /// (`cat f | weir --range=…`, a writer into a FIFO weir left) printed
    /// "Broken pipe" among weir's messages, or not, as the two processes
    /// happened to be scheduled. A test process started in the background of
    /// a script (`scripts/test --quick` runs three) ignores SIGINT and SIGQUIT,
    /// and a bash that finds SIGINT ignored at its start passes that on to
    /// every child, job control or not: a SIGINT sent before the child's
    /// `env --default-signal` ran (``TestShell/asForeground``) was discarded,
    /// and weir, never told, waited on (SafetyTests.interruptEarly: every
    /// signal sent at once was lost with six such loops side by side, none
    /// with the shell started as here).
    @discardableResult
    static func shell(_ command: String, in folder: URL, timeout: TimeInterval = 60) throws -> Result {
        try run(["--default-signal=PIPE,INT,QUIT", "/bin/bash", "-c", command], in: folder,
                environment: ["WEIR": binary], timeout: timeout, executable: "/usr/bin/env")
    }

    static func resolve(_ path: String, in folder: URL) -> String {
        path.hasPrefix("/") ? path : folder.appendingPathComponent(path).path
    }

    struct TimedOut: Error, CustomStringConvertible {
        let arguments: [String]
        var description: String { "weir \(arguments.joined(separator: " ")) did not finish in time" }
    }
}

/// A scratch folder for one test, with helpers to make and read files.
final class Scratch {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("weir-cli-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes compressible text of `size` bytes (seeded) to `name`.
    ///
    /// Words drawn by a linear congruential generator, each followed by a
    /// space. Each word is copied whole from a table of 16-byte slots: the
    /// tests are built unoptimized, where appending a word's bytes one by one
    /// made writing the tens of MB some tests take a large part of their CPU
    /// (bench/results/2026-11-28-inner-loop.md). The bytes are the same.
    @discardableResult
    func text(_ name: String, size: Int, seed: UInt64 = 1) -> Data {
        let words = ["weir", "river", "stream", "dispatch", "queue", "frame", "chunk", "zstd", "\n", "data"]
        var table = [UInt8](repeating: 0, count: 16 * words.count)
        var lengths = [Int](repeating: 0, count: words.count)
        for (index, word) in words.enumerated() {
            let bytes = Array(word.utf8) + [32]
            table.replaceSubrange(16 * index ..< 16 * index + bytes.count, with: bytes)
            lengths[index] = bytes.count
        }
        // 16 bytes of room past the end: a slot is copied whole.
        var data = Data(count: size + 16)
        data.withUnsafeMutableBytes { output in
            table.withUnsafeBytes { slots in
                guard let target = output.baseAddress, let source = slots.baseAddress else { return }
                var state = seed, count = 0
                while count < size {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    let word = Int((state >> 33) % UInt64(words.count))
                    (target + count).copyMemory(from: source + 16 * word, byteCount: 16)
                    count += lengths[word]
                }
            }
        }
        data.count = size
        _ = FileManager.default.createFile(atPath: path(name), contents: data)
        return data
    }

    func data(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// Creates the empty file `name` (a test's signal to a script waiting for it).
    func touch(_ name: String) { close(open(path(name), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)) }

    /// Every name in the folder, hidden ones included (temporary files would show).
    var names: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path).sorted()) ?? [] }

    /// Runs `zstd arguments…` here (the real binary, for interoperability).
    @discardableResult
    func zstd(_ arguments: [String], stdin: String? = nil, stdoutPath: String? = nil) throws -> WeirProcess.Result {
        try WeirProcess.run(arguments, in: url, stdin: stdin, stdoutPath: stdoutPath, executable: "/usr/bin/zstd")
    }
}
