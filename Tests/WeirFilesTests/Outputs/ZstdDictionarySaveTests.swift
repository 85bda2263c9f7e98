import Testing
@testable import WeirFiles
@testable import WeirFormats
@testable import WeirFormatsTestSupport

/// A dictionary saved where `--train` writes it.
@Suite("Dictionaries saved")
struct ZstdDictionarySaveTests {
    @Test("a trained dictionary saved and loaded is the same: its bytes and its ID")
    func saveLoad() throws {
        let samples = TestDictionaries.Samples()
        let dictionary = try TestDictionaries.trained(samples, DictionaryTraining(maximumSize: 4096))
        #expect(dictionary.id != 0)
        try dictionary.save(to: samples.path("saved"))
        let loaded = try ZstdDictionary.load(path: samples.path("saved"))
        #expect(loaded.bytes == dictionary.bytes && loaded.id == dictionary.id)
    }
}
