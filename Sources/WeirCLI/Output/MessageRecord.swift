import FoundationEssentials
import Weir

/// A message as one line of `--progress=json`: under it, every line on
/// stderr is one JSON object, so an error, a warning and any other note
/// (`-v`'s lines) are objects too, beside the ``ProgressRecord`` lines:
///
///     {"event":"error","input":"x","message":"x: No such file or directory","status":1}
///
/// `event` is `"error"`, `"warning"` or `"note"`; `input` the input it is
/// about (as ``JSONRecord`` names it), null when about none; `message` the
/// words the line would have said, without `weir: `; `status` the exit
/// status an error gives the run (1), null otherwise. Every key is always
/// present.
package struct MessageRecord: Encodable, Equatable, Sendable {
    package enum Event: String, Encodable, Sendable {
        case error
        case warning
        case note
    }

    package var event: Event
    package var input: String?
    package var message: String
    package var status: Int?

    package init(event: Event, input: String?, message: String, status: Int? = nil) {
        self.event = event
        self.input = input
        self.message = message
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case event, input, message, status
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        try container.encode(input.map(FileName.withoutPassword), forKey: .input)
        try container.encode(message, forKey: .message)
        try container.encode(status, forKey: .status)
    }

    /// Every key a record has (`man weir` lists them).
    package static let keys = ["event", "input", "message", "status"]

    /// The notes in `text` (lines a command would write on stderr), one
    /// record a line, each without its `weir: `.
    package static func notes(in text: String) -> [MessageRecord] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            let words = line.hasPrefix("weir: ") ? line.dropFirst("weir: ".count) : line
            return MessageRecord(event: .note, input: nil, message: String(words))
        }
    }

    /// The record as one line of JSON, without the newline.
    package func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
