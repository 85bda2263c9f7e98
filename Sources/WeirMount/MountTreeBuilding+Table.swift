import Glibc

/// The table that finds an entry by (folder, name): open addressing over
/// the entries' numbers, tagged with the hash's high half, complete once
/// the first hard link needs every name (MountTreeBuilding).
extension MountTreeBuilding {
    /// The entry named `name` (a range of `bytes`) in `folder`, if any,
    /// the slot it is in or would go in, and the hash of (folder, name).
    /// In the table: a folder's name, or any name once it is complete.
    func find(_ name: Range<Int>, in folder: Int) -> (entry: Int?, slot: Int, hash: Int) {
        let mask = slots.count - 1
        let hash = Self.hash(bytes, name, folder)
        let tag = UInt64(truncatingIfNeeded: hash) >> 32
        var slot = hash & mask
        while true {
            let taken = slots[slot]
            if taken == 0 { return (nil, slot, hash) }
            if taken >> 32 == tag {
                let found = Int(taken & 0xffff_ffff) - 1
                let entry = entries[found]
                if Int(entry.folder) == folder, Int(entry.nameLength) == name.count,
                   memcmp(bytes + entry.nameStart, bytes + name.lowerBound, name.count) == 0 {
                    return (found, slot, hash)
                }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `entry`, whose (folder, name) hashes to `hash`, in `slot` (empty),
    /// growing the table once three quarters full.
    mutating func insert(_ entry: Entry, at slot: Int, hash: Int) {
        var entry = entry
        entry.tabled = true
        entries.append(entry)
        slots[slot] = UInt64(truncatingIfNeeded: hash) & 0xffff_ffff_0000_0000 | UInt64(entries.count)
        tabledCount += 1
        guard tabledCount * 4 > slots.count * 3 else { return }
        rehash(slots: slots.count * 2)
    }

    /// A table of `count` slots (a power of two) holding the tabled entries.
    mutating func rehash(slots count: Int) {
        slots = [UInt64](repeating: 0, count: count)
        let mask = count - 1
        for number in entries.indices where entries[number].tabled {
            let entry = entries[number]
            let hash = Self.hash(bytes, entry.names, Int(entry.folder))
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt64(truncatingIfNeeded: hash) & 0xffff_ffff_0000_0000 | UInt64(number + 1)
        }
    }

    /// Puts every entry in the table, as if each had been looked up when
    /// added: of the entries of one name, in archive order, each but the
    /// last is replaced (its node one name fewer, the entry not kept).
    mutating func completeTable() {
        complete = true
        var count = 1024
        while count * 3 < entries.count * 4 + 4 { count *= 2 }
        // The table's entries, then the others in turn, each found among those before it.
        rehash(slots: count)
        for number in entries.indices where !entries[number].tabled {
            let (other, slot, hash) = find(entries[number].names, in: Int(entries[number].folder))
            let tag = UInt64(truncatingIfNeeded: hash) & 0xffff_ffff_0000_0000 | UInt64(number + 1)
            guard let other else {
                slots[slot] = tag
                entries[number].tabled = true
                tabledCount += 1
                continue
            }
            // The later of the two was bound last: the earlier's node loses the name.
            let (earlier, later) = (min(other, number), max(other, number))
            nodes[Int(entries[earlier].node)].links -= 1
            entries[earlier].folder = Self.replaced
            entries[earlier].tabled = false
            entries[later].tabled = true
            if later == number { slots[slot] = tag }
        }
        if tabledCount * 4 > slots.count * 3 { rehash(slots: slots.count * 2) }
    }

    /// FNV-1a of the name's bytes, seeded by the folder.
    static func hash(_ bytes: UnsafeMutablePointer<UInt8>, _ name: Range<Int>, _ folder: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ (UInt64(folder) &* 0x9e37_79b9_7f4a_7c15)
        for index in name { hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: hash ^ hash >> 32)
    }
}
