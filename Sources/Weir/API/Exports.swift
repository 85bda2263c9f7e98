// `import Weir` is all a user writes: the public types of the layers below
// the engine (WeirError, ZstdDictionary, CompressionParameters,
// PatchReference) come with it.
@_exported import WeirFormats
@_exported import WeirSystem
