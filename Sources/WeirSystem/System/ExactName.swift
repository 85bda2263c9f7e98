/// A file name compared by its exact scalars, which stand one to one for its
/// bytes (``FileName``): `==` on Strings would call two spellings of "é"
/// equal, which are two names. Hashes the String's UTF-8 in place, with no
/// copy of the name as an array of bytes.
package struct ExactName: Hashable {
    let name: String

    package init(name: String) { self.name = name }

    package static func == (left: ExactName, right: ExactName) -> Bool {
        left.name.utf8.elementsEqual(right.name.utf8)
    }

    package func hash(into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
