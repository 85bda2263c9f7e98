// `import Weir` is all a user writes: the engine's targets (the pipelines
// with their options and results, random access and tar reading) and the
// public types of the layers below them (WeirError, ZstdDictionary,
// CompressionParameters, PatchReference) come with it, and the error codes
// each layer declares (WeirFiles has no other public symbol).
@_exported import WeirFiles
@_exported import WeirFormats
@_exported import WeirPipeline
@_exported import WeirSeekable
@_exported import WeirSystem
@_exported import WeirTar
