import CSupport
import Glibc

/// What of the machine this process may use: the cores it may run on and the
/// memory it may hold, as the kernel limits them, read once.
///
/// Cores are counted as Rust's `available_parallelism` and Go's runtime
/// count them: the online cores, narrowed by the affinity mask
/// (`sched_getaffinity`: `taskset`, a cpuset cgroup, `docker --cpuset-cpus`)
/// and by the cgroup's CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us` over
/// `cpu.cfs_period_us`: `docker --cpus=1.5`, a Kubernetes CPU limit), rounded
/// up. Memory is the cgroup's limit (v2 `memory.max`, v1
/// `memory.limit_in_bytes`: `docker -m`, a Kubernetes memory limit), the
/// tightest from the process's own group up to the top of its hierarchy, as
/// the kernel enforces every one of them.
///
/// The groups are found as the kernel names them: `/proc/self/cgroup` gives
/// the process's group in each hierarchy, `/proc/self/mountinfo` where each
/// hierarchy is mounted and which part of it (a container sees its own group
/// as the root). The parsing functions take the files' text, so tests give
/// them any layout.
package struct ProcessLimits: Sendable, Equatable {
    /// The cores online (`sysconf(_SC_NPROCESSORS_ONLN)`).
    package var onlineCores: Int
    /// The CPUs of the affinity mask; nil when it could not be read.
    package var affinityCores: Int?
    /// The CPU time the cgroup allows, in cores (1.5: 150 ms every 100 ms);
    /// nil without a quota.
    package var cpuQuota: Double?
    /// The cgroup's memory limit in bytes; nil without one (`max`, or a
    /// value at or above the machine's memory).
    package var memoryLimit: Int?

    /// What limits the cores, in ``availableCores``.
    package enum CoreLimit: Sendable, Equatable {
        /// Every online core may be used.
        case online
        /// The affinity mask (a cpuset) allows fewer.
        case affinity
        /// The cgroup's CPU quota allows fewer.
        case cpuQuota
    }

    package init(onlineCores: Int, affinityCores: Int? = nil, cpuQuota: Double? = nil, memoryLimit: Int? = nil) {
        self.onlineCores = onlineCores
        self.affinityCores = affinityCores
        self.cpuQuota = cpuQuota
        self.memoryLimit = memoryLimit
    }

    /// The cores this process may keep busy: the fewest of the online cores,
    /// the affinity mask's and the quota rounded up; at least 1.
    package var availableCores: Int {
        max(1, min(onlineCores, affinityCores ?? .max, quotaCores ?? .max))
    }

    /// Which limit chose ``availableCores`` (the quota when both narrow it
    /// to the same count: it is the one a container's owner set).
    package var coreLimit: CoreLimit {
        if let quotaCores, quotaCores <= min(onlineCores, affinityCores ?? .max) { return .cpuQuota }
        if let affinityCores, affinityCores < onlineCores { return .affinity }
        return .online
    }

    private var quotaCores: Int? { cpuQuota.map { max(1, Int($0.rounded(.up))) } }

    /// This process's limits, read at first use (a run reads them once).
    package static let current = ProcessLimits.read()

    /// Reads the limits of this process through `readFile` (a path's whole
    /// text, nil when it cannot be read).
    static func read(readFile: (String) -> String? = ProcessLimits.readFile) -> ProcessLimits {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let affinity = Int(weir_affinity_cpu_count())
        let groups = readFile("/proc/self/cgroup").map(Self.groups(procSelfCgroup:)) ?? []
        let mounts = readFile("/proc/self/mountinfo").map(Self.mounts(mountinfo:)) ?? []
        var quota: Double?
        for directory in Self.directories(controller: "cpu", groups: groups, mounts: mounts) {
            let found = readFile(directory + "/cpu.max").flatMap(Self.cpuQuota(cpuMax:))
                ?? readFile(directory + "/cpu.cfs_quota_us").flatMap { quotaText in
                    readFile(directory + "/cpu.cfs_period_us").flatMap { Self.cpuQuota(quota: quotaText, period: $0) }
                }
            if let found { quota = min(quota ?? found, found) }
        }
        var memory: Int?
        for directory in Self.directories(controller: "memory", groups: groups, mounts: mounts) {
            let found = (readFile(directory + "/memory.max") ?? readFile(directory + "/memory.limit_in_bytes"))
                .flatMap(Self.memoryLimit)
            if let found { memory = min(memory ?? found, found) }
        }
        // A limit at or above the machine's memory limits nothing more.
        let physical = Int(sysconf(Int32(_SC_PHYS_PAGES))) &* Page.size
        if let limit = memory, physical > 0, limit >= physical { memory = nil }
        return ProcessLimits(onlineCores: online, affinityCores: affinity > 0 ? affinity : nil, cpuQuota: quota,
                             memoryLimit: memory)
    }

    // MARK: Parsing (pure)

    /// One line of `/proc/self/cgroup`: the process's group in a hierarchy.
    struct Group: Equatable {
        /// The v1 controllers of the hierarchy (`cpu`, `cpuacct`,
        /// `name=systemd`); empty for the v2 hierarchy (`0::/path`).
        var controllers: [String]
        /// The group's path from the hierarchy's root, as `/a/b`.
        var path: String
    }

    /// A cgroup hierarchy mounted, from one line of `/proc/self/mountinfo`.
    struct Mount: Equatable {
        /// Whether it is the v2 (unified) hierarchy.
        var isVersion2: Bool
        /// The v1 controllers it carries (from its super options).
        var controllers: [String]
        /// The group of the hierarchy that is mounted (a container's own, or `/`).
        var root: String
        /// Where it is mounted.
        var mountPoint: String
    }

    /// The groups of `/proc/self/cgroup` (`ID:controllers:path` per line).
    static func groups(procSelfCgroup text: String) -> [Group] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { return nil }
            let controllers = fields[1].split(separator: ",").map(String.init)
            return Group(controllers: controllers, path: String(fields[2]))
        }
    }

    /// The cgroup mounts of `/proc/self/mountinfo`: fields 4 (root) and 5
    /// (mount point), then after the `-` separator the file system type and,
    /// last, its super options (v1: the controllers). Octal escapes (`\040`
    /// for a space) are decoded in the paths.
    static func mounts(mountinfo text: String) -> [Mount] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash >= 6, dash + 1 < fields.count else { return nil }
            let type = fields[dash + 1]
            guard type == "cgroup" || type == "cgroup2" else { return nil }
            let options = dash + 3 < fields.count
                ? fields[dash + 3].split(separator: ",").map(String.init).filter { $0 != "rw" && $0 != "ro" } : []
            return Mount(isVersion2: type == "cgroup2", controllers: type == "cgroup" ? options : [],
                         root: unescaped(fields[3]), mountPoint: unescaped(fields[4]))
        }
    }

    /// The directories that hold `controller`'s files for this process, its
    /// own group first, then each parent up to the mounted root: in each v1
    /// hierarchy that carries `controller`, and in the v2 hierarchy (whose
    /// files exist only where the controller is enabled). A group outside
    /// the mounted part (another namespace's) has none.
    static func directories(controller: String, groups: [Group], mounts: [Mount]) -> [String] {
        var found: [String] = []
        for mount in mounts where mount.isVersion2 || mount.controllers.contains(controller) {
            let group = groups.first { mount.isVersion2 ? $0.controllers.isEmpty : $0.controllers.contains(controller) }
            guard let group else { continue }
            let root = mount.root == "/" ? "" : mount.root
            guard group.path == mount.root || group.path.hasPrefix(root + "/") else { continue }
            var relative = String(group.path.dropFirst(root.count))
            while true {
                found.append(relative.isEmpty || relative == "/" ? mount.mountPoint : mount.mountPoint + relative)
                guard let slash = relative.lastIndex(of: "/"), !relative.isEmpty, relative != "/" else { break }
                relative = String(relative[..<slash])
            }
        }
        return found
    }

    /// The quota of a v2 `cpu.max` (`QUOTA PERIOD`, in microseconds), in
    /// cores; nil for `max` (none) or a value that is not a quota.
    static func cpuQuota(cpuMax text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]) else { return nil }
        return cpuQuota(quota: quota, period: period)
    }

    /// The quota of v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us`, in
    /// cores; nil for -1 (none).
    static func cpuQuota(quota: String, period: String) -> Double? {
        guard let quota = Int(trimmed(quota)), let period = Int(trimmed(period)) else { return nil }
        return cpuQuota(quota: quota, period: period)
    }

    private static func cpuQuota(quota: Int, period: Int) -> Double? {
        guard quota > 0, period > 0 else { return nil }
        return Double(quota) / Double(period)
    }

    /// A memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`), in
    /// bytes; nil for `max` and for v1's "no limit", the largest multiple of
    /// the page below 2^63 (9223372036854771712): anything from 2^62 up.
    static func memoryLimit(_ text: String) -> Int? {
        guard let bytes = Int(trimmed(text)), bytes > 0, bytes < 1 << 62 else { return nil }
        return bytes
    }

    private static func trimmed(_ text: String) -> Substring {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == " " { text.removeLast() }
        return text
    }

    /// A mountinfo path with its octal escapes (`\040`) decoded.
    private static func unescaped(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let code = UInt8(String(decoding: utf8[index + 1 ... index + 3], as: UTF8.self), radix: 8) {
                bytes.append(code)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A file's whole text (cgroup and /proc files report a size of 0: read
    /// until the end); nil when it cannot be opened or read.
    static func readFile(_ path: String) -> String? {
        guard let file = try? Descriptor.openForReading(path) else { return nil }
        defer { file.close() }
        guard let bytes = try? file.readToEnd() else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
