// `import Weir` is all a user writes: the public types of the layers below
// the engine (WeirError, ZstdDictionary, CompressionParameters,
// PatchReference) come with it, and the error codes each layer declares
// (WeirFiles has no other public symbol).
@_exported import WeirFiles
@_exported import WeirFormats
@_exported import WeirSystem
@_exported import WeirTar
