/// Bytes at offsets that are not a local file's: a remote object read
/// through HTTP range requests (WeirRemote's `RemoteObject`). A
/// ``Descriptor`` made on one (``Descriptor/init(source:path:)``) serves the
/// engine's positional reads (`pread`'s, in ``Descriptor/read(into:at:operation:)``)
/// from it, so the seek table, the member index and the frames of a
/// remote archive are read by the same code as a file's.
///
/// Safe to share across threads: readers of one archive read at once.
package protocol PositionalSource: AnyObject, Sendable {
    /// The object's size in bytes, fixed for its life (a changed object
    /// fails its reads instead).
    var size: Int { get }

    /// Fills `buffer` from `offset`; returns the bytes read, fewer than
    /// asked only at the object's end.
    ///
    /// - Throws: `WeirError` naming the object, when it cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(WeirError) -> Int

    /// Fills `buffer` from `offset` as ``read(into:at:)`` does, telling
    /// `arrived` how many bytes at its start are in, as they come (growing,
    /// never taken back): a reader may use those while the rest comes.
    ///
    /// - Throws: `WeirError` naming the object, when it cannot be read; the
    ///   bytes told of before stay good.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int,
              arrived: (Int) -> Void) throws(WeirError) -> Int

    /// Says that `ranges` (offsets of the object) are about to be read, so
    /// that they can be fetched together, neighbours merged, before the
    /// reads that ask for them piece by piece.
    func prefetch(_ ranges: [Range<Int>]) throws(WeirError)
}

extension PositionalSource {
    /// Reads the whole buffer, then tells of it at once.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int,
                      arrived: (Int) -> Void) throws(WeirError) -> Int {
        let got = try read(into: buffer, at: offset)
        arrived(got)
        return got
    }
}
