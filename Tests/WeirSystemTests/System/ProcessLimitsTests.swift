import Testing
@testable import WeirSystem

/// The cores and memory a process may use, read from cgroup v1 and v2
/// layouts given as text (the real cgroups are tested by the command line:
/// ContainerCommandTests).
@Suite("Process limits")
struct ProcessLimitsTests {
    /// This machine's layout: v1 controllers, each in its own hierarchy, and
    /// an empty v2 hierarchy beside them (systemd's "hybrid").
    static let hybridMountinfo = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
        34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """
    static let hybridCgroup = """
        9:name=systemd:/
        4:memory:/jobs/build
        3:cpuset:/
        1:cpu:/jobs
        0::/
        """

    @Test("/proc/self/cgroup: the v1 controllers of each line, none for the v2 line")
    func groups() {
        let groups = ProcessLimits.groups(procSelfCgroup: Self.hybridCgroup + "\n2:cpu,cpuacct:/a:b\n")
        #expect(groups.count == 6)
        #expect(groups[1] == .init(controllers: ["memory"], path: "/jobs/build"))
        #expect(groups[4] == .init(controllers: [], path: "/"))
        // A colon in a group's name stays in its path.
        #expect(groups[5] == .init(controllers: ["cpu", "cpuacct"], path: "/a:b"))
    }

    @Test("mountinfo: cgroup mounts only, v1 controllers from the super options, escapes decoded")
    func mounts() {
        let mounts = ProcessLimits.mounts(
            mountinfo: Self.hybridMountinfo + """

                50 31 0:40 /docker/abc /sys/fs/cgroup/my\\040mem rw shared:5 master:1 - cgroup cgroup rw,memory,cpu
                """)
        #expect(mounts.count == 6)
        #expect(
            mounts[0] == .init(isVersion2: false, controllers: ["cpu"], root: "/", mountPoint: "/sys/fs/cgroup/cpu"))
        #expect(mounts[4] == .init(isVersion2: true, controllers: [], root: "/", mountPoint: "/sys/fs/cgroup/unified"))
        #expect(mounts[5].root == "/docker/abc")
        #expect(mounts[5].mountPoint == "/sys/fs/cgroup/my mem")
        #expect(mounts[5].controllers.contains("memory"))
    }

    @Test("the directories of a controller: the process's group, then each parent up to the mounted root")
    func directories() {
        let groups = ProcessLimits.groups(procSelfCgroup: Self.hybridCgroup)
        let mounts = ProcessLimits.mounts(mountinfo: Self.hybridMountinfo)
        #expect(
            ProcessLimits.directories(controller: "memory", groups: groups, mounts: mounts) == [
                "/sys/fs/cgroup/memory/jobs/build", "/sys/fs/cgroup/memory/jobs", "/sys/fs/cgroup/memory",
                "/sys/fs/cgroup/unified",
            ])
        #expect(
            ProcessLimits.directories(controller: "cpu", groups: groups, mounts: mounts) == [
                "/sys/fs/cgroup/cpu/jobs", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified",
            ])
        // A container's mount of its own group: the group is the mount point.
        let container = ProcessLimits.mounts(
            mountinfo: "60 1 0:40 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory")
        #expect(
            ProcessLimits.directories(
                controller: "memory",
                groups: [.init(controllers: ["memory"], path: "/docker/abc/job")],
                mounts: container) == ["/sys/fs/cgroup/memory/job", "/sys/fs/cgroup/memory"])
        // A group outside the mounted part (another namespace's) has none.
        #expect(
            ProcessLimits.directories(
                controller: "memory", groups: [.init(controllers: ["memory"], path: "/docker/other")],
                mounts: container
            ).isEmpty)
        #expect(
            ProcessLimits.directories(
                controller: "memory", groups: [.init(controllers: ["memory"], path: "/docker/abcd")],
                mounts: container
            ).isEmpty)
    }

    @Test("CPU quotas: v2 cpu.max and v1 cfs_quota_us over cfs_period_us, in cores; max and -1 are none")
    func cpuQuotas() {
        #expect(ProcessLimits.cpuQuota(cpuMax: "150000 100000\n") == 1.5)
        #expect(ProcessLimits.cpuQuota(cpuMax: "max 100000\n") == nil)
        #expect(ProcessLimits.cpuQuota(cpuMax: "") == nil)
        #expect(ProcessLimits.cpuQuota(quota: "50000\n", period: "100000\n") == 0.5)
        #expect(ProcessLimits.cpuQuota(quota: "-1\n", period: "100000\n") == nil)
        #expect(ProcessLimits.cpuQuota(quota: "200000", period: "0") == nil)
    }

    @Test("memory limits: bytes; max, and v1's 2^63 less a page, are none")
    func memoryLimits() {
        #expect(ProcessLimits.memoryLimit("134217728\n") == 128 << 20)
        #expect(ProcessLimits.memoryLimit("max\n") == nil)
        #expect(ProcessLimits.memoryLimit("9223372036854771712\n") == nil)
        #expect(ProcessLimits.memoryLimit("") == nil)
    }

    @Test("available cores: the fewest of online, affinity and the quota rounded up; what chose them")
    func availableCores() {
        let quota = ProcessLimits(onlineCores: 64, affinityCores: 64, cpuQuota: 2)
        #expect(quota.availableCores == 2)
        #expect(quota.coreLimit == .cpuQuota)
        #expect(ProcessLimits(onlineCores: 2, cpuQuota: 1.5).availableCores == 2)
        #expect(ProcessLimits(onlineCores: 2, cpuQuota: 1.5).coreLimit == .cpuQuota)
        #expect(ProcessLimits(onlineCores: 2, cpuQuota: 0.1).availableCores == 1)
        let affinity = ProcessLimits(onlineCores: 2, affinityCores: 1)
        #expect(affinity.availableCores == 1)
        #expect(affinity.coreLimit == .affinity)
        #expect(ProcessLimits(onlineCores: 8, affinityCores: 2, cpuQuota: 4).coreLimit == .affinity)
        #expect(ProcessLimits(onlineCores: 8, affinityCores: 8).coreLimit == .online)
        #expect(ProcessLimits(onlineCores: 8, affinityCores: 8).availableCores == 8)
    }

    @Test("a v2 container: the quota of its own group, the nearest memory limit up the hierarchy")
    func readVersion2() {
        let files = [
            "/proc/self/cgroup": "0::/kubepods/pod1/c1\n",
            "/proc/self/mountinfo": "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
            "/sys/fs/cgroup/kubepods/pod1/c1/cpu.max": "200000 100000\n",
            "/sys/fs/cgroup/kubepods/pod1/c1/memory.max": "max\n",
            "/sys/fs/cgroup/kubepods/pod1/memory.max": "268435456\n",
            "/sys/fs/cgroup/kubepods/memory.max": "1073741824\n",
            "/sys/fs/cgroup/kubepods/pod1/cpu.max": "max 100000\n",
        ]
        let limits = ProcessLimits.read { files[$0] }
        #expect(limits.cpuQuota == 2)
        #expect(limits.memoryLimit == 256 << 20)
        #expect(limits.availableCores == min(2, limits.onlineCores, limits.affinityCores ?? .max))
    }

    @Test("v1: cfs quota and memory.limit_in_bytes, the tightest of the group and its parents")
    func readVersion1() {
        let files = [
            "/proc/self/cgroup": Self.hybridCgroup,
            "/proc/self/mountinfo": Self.hybridMountinfo,
            "/sys/fs/cgroup/cpu/jobs/cpu.cfs_quota_us": "50000\n",
            "/sys/fs/cgroup/cpu/jobs/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
            "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/memory/jobs/build/memory.limit_in_bytes": "9223372036854771712\n",
            "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes": "134217728\n",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
        ]
        let limits = ProcessLimits.read { files[$0] }
        #expect(limits.cpuQuota == 0.5)
        #expect(limits.availableCores == 1)
        #expect(limits.memoryLimit == 128 << 20)
    }

    @Test("no cgroup files at all: no quota, no memory limit")
    func readNothing() {
        let limits = ProcessLimits.read { _ in nil }
        #expect(limits.cpuQuota == nil)
        #expect(limits.memoryLimit == nil)
        #expect(limits.availableCores >= 1)
    }
}