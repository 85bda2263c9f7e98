import Testing
import WeirCLI

@Suite("--output-dir-flat name collisions")
struct NameCollisionsTests {
    @Test("inputs with the same name after the last slash are reported once per extra copy, sorted")
    func collisions() {
        #expect(NameCollisions.flat(["t/a/f1", "t/b/f1", "f1", "t/x", "y/x", "z"]) == ["f1", "f1", "x"])
        #expect(NameCollisions.flat(["a/f", "a/g"]).isEmpty)
        #expect(NameCollisions.flat([]).isEmpty)
    }
}
