import Glibc
import Weir
import WeirFormats
import WeirSystem

/// A ``MountTree`` while its members are added, in archive order: the
/// names of folders are found through one open-addressing table keyed by
/// (folder, name), whose names are ranges of the tree's byte buffer, so
/// that no name is a key or an array of its own. ``finish()`` sorts each
/// folder's entries by name into one contiguous run and drops the table.
///
/// Only the names that are or were folders' are in the table until the
/// first hard link: a member's folders must be found as it is added, but
/// another name stored twice can wait for ``finish()``, whose sort puts
/// its entries side by side, where the last one is kept. A table of the
/// folders alone (a twentieth of a source tree's names) stays in the
/// caches; one of every name would not. A hard link may name anything, so
/// at the first one every entry goes in the table, which from then on has
/// every name (``completeTable()``).
struct MountTreeBuilding {
    /// An entry while building: its folder too, and whether it is in the table.
    struct Entry {
        var folder: UInt32
        var node: UInt32
        var nameStart: Int
        var nameLength: UInt32
        var tabled: Bool

        var names: Range<Int> { nameStart ..< nameStart + Int(nameLength) }
    }

    var nodes: [MountNode]
    var entries: [Entry] = []
    /// The names and link targets, grown by doubling: raw, so that the
    /// lookups compare and hash them without a bounds check or a retain.
    var bytes: UnsafeMutablePointer<UInt8>
    private var byteCount = 0
    private var byteCapacity: Int
    /// The bytes whose pages are made (``Page/populate(_:_:)``): a step
    /// ahead of what is written, as it grows.
    private var populated = 0
    private static let populateStep = 1 << 20
    /// Entries by the hash of (folder, name): the hash's high half, then
    /// the entry's number plus one (0: an empty slot), so that a probe
    /// reads an entry only when the hashes agree. Never more than three
    /// quarters full: small enough to stay in the caches, the tags keeping
    /// a probe past another name to a compare of slots.
    var slots: [UInt64]
    /// The entries in the table.
    var tabledCount = 0
    /// Whether every entry is in the table (from the first hard link on).
    var complete = false
    /// An entry's `folder` once a later entry of the same name replaced it
    /// (``completeTable()``): it matches no folder, and is not kept.
    static let replaced = UInt32.max
    /// The parts of the name being added, and of a hard link's target:
    /// ranges of `bytes`, kept to spare an allocation per member.
    private var parts: [Range<Int>] = []
    private var targetParts: [Range<Int>] = []
    /// The folders of the last member added (its parent's, and its own if
    /// a folder): their names' ranges of `bytes`, and their nodes. A tar
    /// lists a folder's members together, so the next member's folders
    /// are mostly these, compared by bytes rather than found in the table.
    /// Every folder here is still the one its name leads to: a member only
    /// ever replaces the entry of its own last name, which is deeper than
    /// its folders and is dropped from here before it changes.
    private var chain: [(name: Range<Int>, node: Int)] = []
    /// Where the last member's name was appended, and whether `parts` are
    /// its parts: the next name's parts that lie in the bytes it shares
    /// with it (``MemberIndex/Record/sharedPrefix``) are those, found
    /// again without a byte read, and their folders are the chain's.
    private var partsStart = 0
    private var partsValid = false
    private var skipped = 0
    /// The hard links bound so far, in archive order.
    private var hardLinks: [MountTree.HardLink] = []
    /// Where the last member added ends: the next one's header blocks begin there.
    private var previousEnd = 0
    private let implied: MountTree.Implied

    /// Ready for the members of an index of `members` members.
    init(implied: MountTree.Implied, members: Int) {
        self.implied = implied
        nodes = [implied.folder]
        // Their pages made at once (most of the memory the building writes), not by a fault at each.
        Page.populate(&nodes, capacity: members + 1)
        Page.populate(&entries, capacity: members)
        // The folders' names: grown as they come, mostly far fewer than the members.
        slots = [UInt64](repeating: 0, count: 1024)
        // Room for names of the usual length: the pages are not touched, so not taken, until written.
        byteCapacity = max(1 << 16, members * 128)
        bytes = .allocate(capacity: byteCapacity)
    }

    /// Frees the bytes, when the tree is not finished (an index that failed its walk).
    func discard() { bytes.deallocate() }

    /// Appends `more` to the bytes; returns where they begin.
    @discardableResult
    private mutating func append(_ more: UnsafeRawBufferPointer) -> Int {
        let start = byteCount
        if byteCount + more.count > byteCapacity {
            while byteCount + more.count > byteCapacity { byteCapacity *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: byteCapacity)
            populated = 0
            populate(grown, upTo: byteCount + more.count)
            grown.update(from: bytes, count: byteCount)
            bytes.deallocate()
            bytes = grown
        }
        if byteCount + more.count > populated { populate(bytes, upTo: byteCount + more.count) }
        if let source = more.baseAddress {
            UnsafeMutableRawPointer(bytes + byteCount).copyMemory(from: source, byteCount: more.count)
        }
        byteCount += more.count
        return start
    }

    /// Makes the pages of `buffer` (the bytes' room) up to a step past `end`.
    private mutating func populate(_ buffer: UnsafeMutablePointer<UInt8>, upTo end: Int) {
        let upTo = min(byteCapacity, end + Self.populateStep)
        Page.populate(UnsafeMutableRawPointer(buffer + populated), upTo - populated)
        populated = upTo
    }

    /// Adds one member, as `tar x` would take it after those added before.
    mutating func add(_ member: MemberIndex.Record) {
        // Its header blocks run from the previous member's end, as tar reads
        // them: a gap the index leaves (none in a tar written end to end) may
        // hold the member's own pax or long-name headers, checked with it.
        let blocksStart = min(previousEnd, member.headerOffset)
        previousEnd = member.end
        let start = append(member.path)
        // The parts that lie before a '/' of the bytes shared with the previous member's name, moved to this copy.
        var reused = 0
        if partsValid, member.sharedPrefix > 0 {
            let shift = start - partsStart
            while reused < parts.count, parts[reused].upperBound - partsStart < member.sharedPrefix {
                parts[reused] = parts[reused].lowerBound + shift ..< parts[reused].upperBound + shift
                reused += 1
            }
        }
        let resume = reused == 0 ? start : parts[reused - 1].upperBound + 1
        partsStart = start
        partsValid = Self.split(bytes, resume ..< byteCount, into: &parts, keeping: reused)
        guard partsValid else {
            byteCount = start
            skipped += 1
            return
        }
        let isFolder = member.type == UInt8(ascii: "5")
        guard let last = parts.last else {
            // The archive's own root ("./"): its metadata is the mount's root's.
            if isFolder { setMetadata(of: 0, from: member) }
            byteCount = start
            return
        }
        let parent = folder(parts.count - 1, known: reused)
        if member.type == UInt8(ascii: "1"), !complete { completeTable() }
        let (existing, slot, hash) = find(last, in: parent)
        if isFolder, let existing, nodes[Int(entries[existing].node)].kind == .folder {
            setMetadata(of: Int(entries[existing].node), from: member)
            chain.append((last, Int(entries[existing].node)))
            return
        }
        let node: Int
        if member.type == UInt8(ascii: "1") {
            let linkStart = append(member.link)
            let target = Self.split(bytes, linkStart ..< byteCount, into: &targetParts) ? find(targetParts) : nil
            // Its own record, checked against its own header blocks with the node its name shows (its name and
            // link kept): its target's; or, for a link tar x cannot make, which leaves the name as it was, the
            // node the name had (a record that calls a later copy of a name such a link hides that copy).
            let record = { (node: Int) in
                MountTree.HardLink(
                    node: UInt32(node), headerStart: blocksStart,
                    headerLength: UInt32(clamping: member.dataOffset - blocksStart),
                    dataLength: member.dataLength, size: member.size, pathStart: start,
                    pathLength: UInt32(clamping: member.path.count), linkLength: UInt32(clamping: member.link.count))
            }
            guard let target, nodes[target].kind != .folder else {
                if let existing, nodes[Int(entries[existing].node)].kind != .folder {
                    hardLinks.append(record(Int(entries[existing].node)))
                } else {
                    byteCount = linkStart
                }
                skipped += 1
                return
            }
            node = target
            nodes[node].links += 1
            hardLinks.append(record(node))
        } else {
            node = nodes.count
            nodes.append(Self.node(of: member, blocksStart: blocksStart, pathStart: start, implied: implied))
            if nodes[node].kind == .symbolicLink {
                append(member.link)
                nodes[node].linkLength = UInt32(clamping: member.link.count)
            }
        }
        bind(last, in: parent, to: node, replacing: existing, at: slot, hash: hash)
        if nodes[node].kind == .folder {
            chain.append((last, node))
        }
    }

    /// The tree: each folder's entries sorted by name into one run, of a
    /// name stored twice its last entry only (the others' nodes one name
    /// fewer), each folder's link count set (2, and one per folder in it).
    /// The builder is done with after it.
    mutating func finish() -> (nodes: [MountNode], entries: [MountTree.Entry], bytes: MountBytes, skipped: Int,
                               hardLinks: [MountTree.HardLink]) {
        slots = []
        var nodes = self.nodes
        self.nodes = []
        // Each folder's run begins where the runs of the folders before it end.
        var starts = [Int](repeating: 0, count: nodes.count + 1)
        for entry in entries where entry.folder != Self.replaced { starts[Int(entry.folder) + 1] += 1 }
        for folder in 0 ..< nodes.count { starts[folder + 1] += starts[folder] }
        var placed = starts
        var sorted = [MountTree.Entry](repeating: MountTree.Entry(nameStart: 0, nameLength: 0, node: 0),
                                       count: starts[nodes.count])
        for entry in entries where entry.folder != Self.replaced {
            sorted[placed[Int(entry.folder)]] = MountTree.Entry(nameStart: entry.nameStart,
                                                                nameLength: entry.nameLength, node: entry.node)
            placed[Int(entry.folder)] += 1
        }
        entries = []
        placed = []
        let all = UnsafeRawBufferPointer(start: bytes, count: byteCount)
        // Where the runs go once the names stored twice are dropped: never after where they stand.
        var kept = 0
        for folder in 0 ..< nodes.count {
            let run = starts[folder] ..< starts[folder + 1]
            nodes[folder].firstEntry = UInt32(kept)
            // A tar made with its names sorted lists each folder's in order, each name once: nothing to sort nor
            // to drop, found by one compare of each pair.
            if Self.ordered(sorted, run, all) {
                if kept < run.lowerBound { for index in run { sorted[kept + index - run.lowerBound] = sorted[index] } }
                kept += run.count
                nodes[folder].entryCount = UInt32(run.count)
                continue
            }
            // By name, then in archive order: an entry's name lies in its member's, appended as they came.
            sorted[run].sort { left, right in
                let order = MountTree.compare(UnsafeRawBufferPointer(rebasing: all[left.names]),
                                              UnsafeRawBufferPointer(rebasing: all[right.names]))
                return order < 0 || order == 0 && left.nameStart < right.nameStart
            }
            for index in run {
                if index + 1 < run.upperBound,
                   MountTree.compare(UnsafeRawBufferPointer(rebasing: all[sorted[index].names]),
                                     UnsafeRawBufferPointer(rebasing: all[sorted[index + 1].names])) == 0 {
                    nodes[Int(sorted[index].node)].links -= 1
                    continue
                }
                sorted[kept] = sorted[index]
                kept += 1
            }
            nodes[folder].entryCount = UInt32(kept) - nodes[folder].firstEntry
        }
        sorted.removeLast(sorted.count - kept)
        for folder in nodes.indices where nodes[folder].kind == .folder {
            let run = Int(nodes[folder].firstEntry) ..< Int(nodes[folder].firstEntry + nodes[folder].entryCount)
            nodes[folder].links = 2 + Int32(sorted[run].count { nodes[Int($0.node)].kind == .folder })
        }
        // By the node they lead to, each node's in archive order: its check finds them by a binary search.
        let links = hardLinks.enumerated().sorted { ($0.element.node, $0.offset) < ($1.element.node, $1.offset) }
            .map(\.element)
        return (nodes, sorted, MountBytes(taking: bytes, count: byteCount), skipped, links)
    }

    /// Whether the names of `entries` at `run` are in order, each once.
    private static func ordered(_ entries: [MountTree.Entry], _ run: Range<Int>,
                                _ all: UnsafeRawBufferPointer) -> Bool {
        for index in run.dropLast() {
            let left = UnsafeRawBufferPointer(rebasing: all[entries[index].names])
            let right = UnsafeRawBufferPointer(rebasing: all[entries[index + 1].names])
            if MountTree.compare(left, right) >= 0 { return false }
        }
        return true
    }

    /// The parts of the name at `range` of `bytes`, as `tar x` takes them,
    /// into `parts` after its first `kept`; false for a name with a `..` part.
    private static func split(_ bytes: UnsafeMutablePointer<UInt8>, _ range: Range<Int>,
                              into parts: inout [Range<Int>], keeping kept: Int = 0) -> Bool {
        parts.removeLast(parts.count - kept)
        var at = range.lowerBound
        while at < range.upperBound {
            let end = memchr(bytes + at, Int32(UInt8(ascii: "/")), range.upperBound - at)
                .map { bytes.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? range.upperBound
            let count = end - at
            if count == 2, bytes[at] == UInt8(ascii: "."), bytes[at + 1] == UInt8(ascii: ".") { return false }
            if count > 0, !(count == 1 && bytes[at] == UInt8(ascii: ".")) { parts.append(at ..< end) }
            at = end + 1
        }
        return true
    }

    /// The node of the names `parts`, nil when there is none.
    private func find(_ parts: [Range<Int>]) -> Int? {
        var node = 0
        for part in parts {
            guard nodes[node].kind == .folder, let entry = find(part, in: node).entry else { return nil }
            node = Int(entries[entry].node)
        }
        return node
    }

    /// The folder of the first `count` of `parts`, made (and its parents)
    /// when the tar did not list it; a name that is not a folder there is
    /// replaced by one. The first `known` parts are the last member's, whose
    /// folders the chain holds.
    private mutating func folder(_ count: Int, known: Int) -> Int {
        var kept = min(known, count, chain.count)
        var node = kept == 0 ? 0 : chain[kept - 1].node
        while kept < count, kept < chain.count, chain[kept].name.count == parts[kept].count,
              memcmp(bytes + chain[kept].name.lowerBound, bytes + parts[kept].lowerBound, parts[kept].count) == 0 {
            node = chain[kept].node
            kept += 1
        }
        chain.removeLast(chain.count - kept)
        for index in kept ..< count {
            defer { chain.append((parts[index], node)) }
            let part = parts[index]
            let (existing, slot, hash) = find(part, in: node)
            if let existing, nodes[Int(entries[existing].node)].kind == .folder {
                node = Int(entries[existing].node)
                continue
            }
            let made = nodes.count
            nodes.append(implied.folder)
            bind(part, in: node, to: made, replacing: existing, at: slot, hash: hash)
            node = made
        }
        return node
    }

    /// Points the name `name` in `folder` at `node`: the entry `existing` if
    /// the folder has one (the name leaves its old node, the same one for a
    /// hard link to itself), else a new entry at `slot`.
    private mutating func bind(_ name: Range<Int>, in folder: Int, to node: Int, replacing existing: Int?,
                               at slot: Int, hash: Int) {
        if let existing {
            nodes[Int(entries[existing].node)].links -= 1
            entries[existing].node = UInt32(node)
            return
        }
        let entry = Entry(folder: UInt32(folder), node: UInt32(node), nameStart: name.lowerBound,
                          nameLength: UInt32(clamping: name.count), tabled: false)
        if complete || nodes[node].kind == .folder {
            insert(entry, at: slot, hash: hash)
        } else {
            // Not looked up again but by ``finish()``: if the name comes again, its later entry wins there.
            entries.append(entry)
        }
    }

    private mutating func setMetadata(of index: Int, from member: MemberIndex.Record) {
        nodes[index].mode = member.mode & 0o7777
        nodes[index].uid = UInt32(clamping: member.uid)
        nodes[index].gid = UInt32(clamping: member.gid)
        nodes[index].mtime = member.mtime
    }

    /// The node of a member that is not a hard link, its header blocks from
    /// `blocksStart`, its name at `pathStart`.
    private static func node(of member: MemberIndex.Record, blocksStart: Int, pathStart: Int,
                             implied: MountTree.Implied) -> MountNode {
        let kind: MountNode.Kind = switch member.type {
        case UInt8(ascii: "2"): .symbolicLink
        case UInt8(ascii: "3"): .characterDevice
        case UInt8(ascii: "4"): .blockDevice
        case UInt8(ascii: "5"): .folder
        case UInt8(ascii: "6"): .fifo
        default: .file
        }
        var node = MountNode(kind: kind, mode: member.mode & 0o7777, uid: UInt32(clamping: member.uid),
                             gid: UInt32(clamping: member.gid), mtime: member.mtime)
        node.type = member.type
        node.pathStart = pathStart
        node.pathLength = UInt32(clamping: member.path.count)
        node.headerLength = member.dataOffset - blocksStart
        node.dataOffset = member.dataOffset
        node.dataLength = member.dataLength
        node.device = (UInt32(clamping: member.devmajor), UInt32(clamping: member.devminor))
        node.sparse = member.type == UInt8(ascii: "S")
        switch kind {
        case .file: node.size = member.size
        case .symbolicLink: node.size = member.link.count
        default: break
        }
        return node
    }
}
