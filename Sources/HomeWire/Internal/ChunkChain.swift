#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The memory behind `CArena` and `UnpackArena`: a bump allocator over malloc'd
/// chunks chained through their first word, all freed together.
///
/// Most messages on the hot paths (a frame, a status, a read, a batch of writes)
/// need well under a kilobyte of C structs, so the first chunk is small enough for
/// glibc's per-thread cache (up to 1 032 bytes): an encode or decode then costs one
/// cached malloc and free instead of a 16 KiB allocation and an array to track it.
/// Later chunks double, up to 16 KiB, for large trees (snapshots, event batches);
/// a block larger than half a chunk gets a chunk of its own.
struct ChunkChain: ~Copyable {
    private static let firstChunkSize = 1008
    private static let largestChunkSize = 16 * 1024
    /// Each chunk starts with a link to the previous one, padded to malloc's alignment.
    private static let linkSize = 16

    private var newest: UnsafeMutableRawPointer?
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0
    private var nextChunkSize = firstChunkSize

    init() {}

    deinit {
        var chunk = newest
        while let current = chunk {
            chunk = current.load(as: UnsafeMutableRawPointer?.self)
            free(current)
        }
    }

    /// `byteCount` bytes aligned to `alignment` (a power of two, at most 16), or nil
    /// when malloc fails.
    mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer? {
        if let cursor {
            let misalignment = Int(bitPattern: cursor) & (alignment - 1)
            let padding = misalignment == 0 ? 0 : alignment - misalignment
            if padding + byteCount <= remaining {
                let result = cursor + padding
                self.cursor = result + byteCount
                remaining -= padding + byteCount
                return result
            }
        }
        let usable = nextChunkSize - Self.linkSize
        if byteCount > usable / 2 {
            // A large block gets a chunk of its own; the current chunk stays in use.
            guard let block = link(size: Self.linkSize + byteCount) else { return nil }
            return block + Self.linkSize
        }
        guard let chunk = link(size: nextChunkSize) else { return nil }
        cursor = chunk + Self.linkSize + byteCount
        remaining = usable - byteCount
        nextChunkSize = min(nextChunkSize * 2, Self.largestChunkSize)
        return chunk + Self.linkSize
    }

    /// A new chunk of `size` bytes, linked in front of the chain.
    private mutating func link(size: Int) -> UnsafeMutableRawPointer? {
        guard let chunk = malloc(size) else { return nil }
        chunk.storeBytes(of: newest, as: UnsafeMutableRawPointer?.self)
        newest = chunk
        return chunk
    }
}
