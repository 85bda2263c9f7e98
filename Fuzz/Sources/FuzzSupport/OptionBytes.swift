/// Splits a fuzz input into a few leading option bytes and the payload, so
/// that libFuzzer mutates the choices (piece sizes, levels, modes) along
/// with the data. An input shorter than the options gets zeros for the
/// missing ones and an empty payload.
public struct OptionBytes {
    private let options: [UInt8]
    /// The bytes after the options.
    public let payload: UnsafeRawBufferPointer

    public init(_ input: UnsafeRawBufferPointer, count: Int) {
        let taken = min(count, input.count)
        options = Array(input.prefix(taken)) + [UInt8](repeating: 0, count: count - taken)
        payload = UnsafeRawBufferPointer(rebasing: input[taken...])
    }

    /// Option byte `index`.
    public subscript(index: Int) -> UInt8 { options[index] }

    /// Bits `shift ..< shift + width` of option byte `index`.
    public func bits(_ index: Int, _ shift: Int, _ width: Int) -> Int {
        Int(options[index] >> UInt8(shift)) & ((1 << width) - 1)
    }

    /// Whether bit `shift` of option byte `index` is set.
    public func flag(_ index: Int, _ shift: Int) -> Bool { bits(index, shift, 1) == 1 }
}
