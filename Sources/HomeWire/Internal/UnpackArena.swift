internal import CHomeProto

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A bump allocator handed to protobuf-c's `unpack`, so that decoding a message
/// costs a malloc per chunk (see `ChunkChain`) instead of one per field and
/// sub-message, and freeing the tree is dropping the arena. (protobuf-c unpacks every nested message, string
/// and repeated field into its own allocation: a batch of 256 events was ~1 300
/// mallocs and as many frees.)
struct UnpackArena: ~Copyable {
    private var chunks = ChunkChain()

    /// Runs `body` with a protobuf-c allocator backed by a fresh arena; everything
    /// allocated through it is freed when `body` returns.
    static func withAllocator<R, E: Error>(_ body: (UnsafeMutablePointer<ProtobufCAllocator>) throws(E) -> R) throws(E)
        -> R
    {
        var arena = UnpackArena()
        return try withUnsafeMutablePointer(to: &arena) { arenaPointer throws(E) -> R in
            var allocator = ProtobufCAllocator(
                alloc: { data, size in
                    // protobuf-c's fields need no more than malloc's alignment.
                    data!.assumingMemoryBound(to: UnpackArena.self).pointee.chunks.allocate(
                        byteCount: max(size, 1), alignment: 16)
                },
                free: { _, _ in },
                allocator_data: UnsafeMutableRawPointer(arenaPointer))
            return try withUnsafeMutablePointer(to: &allocator) { pointer throws(E) in try body(pointer) }
        }
    }
}
