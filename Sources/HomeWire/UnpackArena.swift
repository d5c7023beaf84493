internal import CHomeProto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bump allocator handed to protobuf-c's `unpack`, so that decoding a message
/// costs a malloc per 16 KiB instead of one per field and sub-message, and freeing
/// the tree is dropping the arena. (protobuf-c unpacks every nested message, string
/// and repeated field into its own allocation: a batch of 256 events was ~1 300
/// mallocs and as many frees.)
final class UnpackArena {
    private static let chunkSize = 16 * 1024
    private var chunks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0

    deinit {
        for chunk in chunks { free(chunk) }
    }

    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        let size = (max(size, 1) + 15) & ~15 // malloc's alignment
        if size <= remaining, let cursor {
            self.cursor = cursor + size
            remaining -= size
            return cursor
        }
        if size > Self.chunkSize / 4 {
            guard let block = malloc(size) else { return nil }
            chunks.append(block)
            return block
        }
        guard let chunk = malloc(Self.chunkSize) else { return nil }
        chunks.append(chunk)
        cursor = chunk + size
        remaining = Self.chunkSize - size
        return chunk
    }

    /// Runs `body` with a protobuf-c allocator backed by a fresh arena; everything
    /// allocated through it is freed when `body` returns.
    static func withAllocator<R, E: Error>(_ body: (UnsafeMutablePointer<ProtobufCAllocator>) throws(E) -> R) throws(E) -> R {
        let arena = UnpackArena()
        var allocator = ProtobufCAllocator(
            alloc: { data, size in
                Unmanaged<UnpackArena>.fromOpaque(data!).takeUnretainedValue().allocate(size)
            },
            free: { _, _ in },
            allocator_data: Unmanaged.passUnretained(arena).toOpaque())
        let result = try withUnsafeMutablePointer(to: &allocator) { pointer throws(E) in try body(pointer) }
        withExtendedLifetime(arena) {}
        return result
    }
}
