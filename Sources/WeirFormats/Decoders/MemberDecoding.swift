import WeirSystem

/// A decoder of one format's members (zstd frames, gzip members, xz and
/// .lzma streams, lz4 frames), run piece by piece as the input arrives:
/// the one shape every format's library takes for the one streaming loop,
/// ``FrameDecoder``, as zstd's `FIO_decompressFrames` hands each member
/// to its format's function. ``start(at:)`` begins a member;
/// ``step(_:consumed:into:filled:)`` runs the library once, until the input
/// is used, the output is full or the member ends. Each library's state is
/// made once and reset per member. Used by one thread at a time.
protocol MemberDecoding: AnyObject {
    /// The format of the members it decodes.
    var format: CompressedFormat { get }
    /// Told of the input the decoder takes, as it takes it, a step at a
    /// time (``WorkTally/step``): the progress of the decoding. nil: nobody
    /// asks, and the input goes to the decoder whole.
    var consumed: (@Sendable (Int) -> Void)? { get }
    /// Begins a member at input `offset` (where its errors say it starts).
    func start(at offset: Int) throws(WeirError)
    /// Decodes from `source[consumed...]` into `destination[filled...]`,
    /// advancing both, once.
    ///
    /// - Returns: whether the member has ended and its content is all out.
    /// - Throws: the format's corrupt message (``corrupt(_:)``), or what
    ///   its library's failure is (memory, the window limit).
    func step(_ source: UnsafeRawBufferPointer, consumed: inout Int, into destination: UnsafeMutableRawBufferPointer,
              filled: inout Int) throws(WeirError) -> Bool
    /// The error for a member that does not decode, `detail` saying why, in
    /// its format's words and with where the member starts when known.
    func corrupt(_ detail: String) -> WeirError
}

extension MemberDecoding {
    var consumed: (@Sendable (Int) -> Void)? { nil }
}
