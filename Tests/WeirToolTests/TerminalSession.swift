import Foundation
import Glibc
import Testing

/// A bash script run in a real pseudo-terminal (util-linux `script`), its
/// screen read while it runs: a test waits for what a user would see (a
/// line drawn, a percentage) and acts then, instead of sleeping and hoping
/// the machine kept up. `$WEIR` is the binary.
final class TerminalSession {
    private let process = Process()
    private let screenPath: String
    private let screenFile: FileHandle

    /// Starts `script` (bash) in `scratch`, in a pseudo-terminal.
    init(_ script: String, in scratch: Scratch) throws {
        try script.write(toFile: scratch.path("job.sh"), atomically: true, encoding: .utf8)
        screenPath = scratch.path("screen-\(UUID().uuidString)")
        screenFile = FileHandle(fileDescriptor: open(screenPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644),
                                closeOnDealloc: true)
        // SIGPIPE's default action, as in a user's terminal (see WeirProcess.shell).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal=PIPE", "/usr/bin/script", "-qec", "bash job.sh", "/dev/null"]
        process.currentDirectoryURL = scratch.url
        process.environment = ProcessInfo.processInfo.environment.merging(["WEIR": WeirProcess.binary]) { $1 }
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        process.standardOutput = screenFile
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        unlink(screenPath)
    }

    /// All the terminal received so far.
    var screen: String { String(decoding: FileManager.default.contents(atPath: screenPath) ?? Data(), as: UTF8.self) }

    /// Waits until the screen satisfies `seen` (true), or the script ends or
    /// `timeout` seconds pass (false). The time limit only keeps a broken
    /// run from hanging the suite; nothing is asserted about time.
    func wait(timeout: TimeInterval = 240, until seen: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let running = process.isRunning
            if seen(screen) { return true }
            if !running { return false }
            usleep(20_000)
        }
        return false
    }

    /// Waits for the script to end (killed past `timeout` seconds) and returns the whole screen.
    func finish(timeout: TimeInterval = 240) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!process.isRunning, "the script did not end: \(screen.suffix(300).debugDescription)")
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return screen
    }
}
