import WeirSystem

/// The run's dictionary digested once per level (`--adapt` with `-D`): a
/// referenced CDict imposes its own level on the frame, so a frame at
/// another level needs the dictionary digested for it. Made when a level
/// is first asked for, then shared by every worker's context, which only
/// reads it.
///
/// Threads: any; the digests are behind one lock (digesting one, brief
/// next to a run, happens at most once per level).
package final class LeveledDictionaries: Sendable {
    private let dictionary: ZstdDictionary
    private let path: String
    private let digests: Locked<[Int: CompressionDictionary]>

    /// `first` is `dictionary` already digested at `level`.
    package init(_ dictionary: ZstdDictionary, first: CompressionDictionary, level: Int, path: String) {
        self.dictionary = dictionary
        self.path = path
        digests = Locked([level: first])
    }

    /// The dictionary digested for `level`.
    package func at(level: Int) throws(WeirError) -> CompressionDictionary {
        let found = digests.withLock { digests -> Result<CompressionDictionary, WeirError> in
            if let made = digests[level] { return .success(made) }
            do throws(WeirError) {
                let made = try CompressionDictionary(dictionary, level: level, path: path)
                digests[level] = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try found.get()
    }
}
