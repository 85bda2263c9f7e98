/// `weir -d --member=PATTERN`: a tar stream of the members of a `.tar.zst`
/// that the patterns select (``TarMemberSelection``), in archive order, each
/// member's bytes as they stand in the content, then tar's end blocks,
/// written through DispatchIO (a ``RangeOutput``). Only the frames that hold
/// those members are read and decoded (``TarArchive``, its
/// ``SeekableReader``); every member's header blocks are checked against
/// the index before a byte of it goes out. A ``Cancellation`` stops it
/// between pieces.
package enum TarMemberExtraction {
    /// What an extraction did.
    package struct Outcome: Sendable, Equatable {
        /// The members written.
        package var members = 0
        /// Bytes written, end blocks included.
        package var bytesOut = 0
        /// Frames decoded (a frame counts once per member it holds).
        package var framesRead = 0
        /// The patterns that matched no member: tar's "Not found in archive".
        package var unmatched: [TarMemberPattern] = []
    }

    /// The members of the file at `path` that `patterns` select, as a tar
    /// stream to `output`.
    package static func file(path: String, patterns: [TarMemberPattern], options: DecompressionOptions,
                             output: Descriptor, cancellation: Cancellation? = nil) throws(WeirError) -> Outcome {
        let archive = try TarArchive(path: path, options: options)
        let selection = archive.select(patterns)
        var outcome = Outcome(members: selection.members.count, unmatched: selection.unmatched)
        let sink = RangeOutput(output)
        do throws(WeirError) {
            outcome.framesRead = try archive.writeTar(of: selection.members) { piece throws(WeirError) in
                if cancellation?.isCancelled == true {
                    throw WeirError.cancelled(path: path, operation: .decompress)
                }
                try sink.write(piece)
                outcome.bytesOut += piece.count
            }
            try sink.finish()
        } catch {
            sink.stop(error)
            throw error
        }
        return outcome
    }
}
