import Foundation
import Glibc

/// A cgroup of its own for one test, as a container gets from its runtime:
/// made in the hierarchy that carries `controller` (v2 where that controller
/// is enabled, else v1), removed when the test ends. Commands join it before
/// they run weir (``command(_:)``), so only weir is limited, not the test.
///
/// Needs root and a mounted cgroup file system, as CI's machines have: a
/// test that cannot make its group fails, it is not skipped.
final class TestCgroup {
    /// The group's folder, where its limits are written.
    let directory: String
    /// Whether it is a v2 (unified) group.
    let isVersion2: Bool

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Makes a group for `controller` (`memory`, `cpu`, `cpuset`).
    init(controller: String) throws {
        let mountinfo = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
        let ownGroups = try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)
        let name = "weir-test-\(UUID().uuidString.prefix(8))"
        var found: (directory: String, version2: Bool)?
        for line in mountinfo.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash + 3 < fields.count else { continue }
            let mountPoint = String(fields[4])
            if fields[dash + 1] == "cgroup2" {
                // The root group is free of the "no internal processes" rule:
                // a child of it may take any controller the root has.
                let controllers =
                    (try? String(contentsOfFile: mountPoint + "/cgroup.controllers", encoding: .utf8)) ?? ""
                guard controllers.split(whereSeparator: \.isWhitespace).contains(Substring(controller)) else {
                    continue
                }
                found = (mountPoint + "/" + name, true)
                break
            }
            guard fields[dash + 1] == "cgroup", fields[dash + 3].split(separator: ",").contains(Substring(controller))
            else { continue }
            // v1: under this process's own group, so the group's parents
            // (and their limits) stay those of the test.
            let own = ownGroups.split(separator: "\n").first { line in
                line.split(separator: ":", maxSplits: 2).dropFirst().first?.split(separator: ",")
                    .contains(Substring(controller)) == true
            }
            let path = own.map { String($0.split(separator: ":", maxSplits: 2)[2]) } ?? "/"
            let root = String(fields[3])
            let relative = root == "/" ? path : String(path.dropFirst(root.count))
            found = (mountPoint + (relative == "/" ? "" : relative) + "/" + name, false)
        }
        guard let found else {
            throw Unavailable(description: "no cgroup hierarchy with the \(controller) controller is mounted")
        }
        directory = found.directory
        isVersion2 = found.version2
        if isVersion2 {
            let parent = (directory as NSString).deletingLastPathComponent
            try? "+\(controller)".write(toFile: parent + "/cgroup.subtree_control", atomically: false, encoding: .utf8)
        }
        guard mkdir(directory, 0o755) == 0 else {
            throw Unavailable(
                description: "mkdir \(directory): \(String(cString: strerror(errno))) (the tests need root)")
        }
        if controller == "cpuset" && !isVersion2 {
            // A v1 cpuset group takes no process before it has CPUs and memory nodes.
            let parent = (directory as NSString).deletingLastPathComponent
            try write("cpuset.mems", Self.contents(of: parent + "/cpuset.mems"))
        }
    }

    deinit {
        // The processes have exited; the kernel may take a moment to let the group go.
        for _ in 0..<100 where rmdir(directory) != 0 && errno == EBUSY { usleep(20_000) }
    }

    /// Writes `value` to the group's `file` (a limit).
    func write(_ file: String, _ value: String) throws {
        try value.write(toFile: directory + "/" + file, atomically: false, encoding: .utf8)
    }

    /// The text of the group's `file` (a counter), trimmed.
    func read(_ file: String) -> String {
        Self.contents(of: directory + "/" + file)
    }

    private static func contents(of path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Sets a memory limit of `bytes`, without swap to fall back on.
    func limitMemory(_ bytes: Int) throws {
        if isVersion2 {
            try write("memory.max", "\(bytes)")
            try? write("memory.swap.max", "0")
        } else {
            try write("memory.limit_in_bytes", "\(bytes)")
            try? write("memory.swappiness", "0")
        }
    }

    /// Sets a CPU quota of `quota` microseconds every 100 ms.
    func limitCPU(quota: Int) throws {
        if isVersion2 {
            try write("cpu.max", "\(quota) 100000")
        } else {
            try write("cpu.cfs_period_us", "100000")
            try write("cpu.cfs_quota_us", "\(quota)")
        }
    }

    /// A shell command that moves its shell into the group, then runs
    /// `arguments` (a shell word list, `$WEIR` for weir) there.
    func command(_ arguments: String) -> String {
        "echo $$ > '\(directory)/cgroup.procs' && exec \(arguments)"
    }
}
