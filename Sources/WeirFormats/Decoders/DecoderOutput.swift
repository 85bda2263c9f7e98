import WeirSystem

/// Where a ``FrameDecoder`` puts content: the buffer to decode into next,
/// and what to do once the decoder filled it up to a point.
package protocol DecoderOutput {
    /// The buffer to decode into, and how much of it is already full (a
    /// buffer left full makes no room: the decoder stops, or finds no progress).
    mutating func buffer() throws(WeirError) -> (UnsafeMutableRawBufferPointer, filled: Int)
    /// The decoder filled the buffer up to `filled`.
    mutating func decoded(upTo filled: Int) throws(WeirError)
}

/// One buffer, decoded into from its start every time: the content goes to
/// the decoder's body and is not kept (a read, a measure, a range).
package struct ScratchOutput: DecoderOutput {
    let space: UnsafeMutableRawBufferPointer

    package init(space: UnsafeMutableRawBufferPointer) { self.space = space }

    package func buffer() -> (UnsafeMutableRawBufferPointer, filled: Int) { (space, 0) }
    package func decoded(upTo filled: Int) {}
}

/// One buffer that receives a whole frame, filled in place call after call
/// (a context with a stable output buffer needs the same buffer and
/// position each time).
struct InPlaceOutput: DecoderOutput {
    let space: UnsafeMutableRawBufferPointer
    /// How much of it is full.
    private(set) var filled = 0

    init(_ space: UnsafeMutableRawBufferPointer) { self.space = space }

    func buffer() -> (UnsafeMutableRawBufferPointer, filled: Int) { (space, filled) }
    mutating func decoded(upTo filled: Int) { self.filled = filled }
}
