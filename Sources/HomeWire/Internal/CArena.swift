internal import CHomeProto

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The one owner of every C allocation made while building a protobuf-c message
/// tree for encoding: a bump allocator over malloc'd chunks, all freed together
/// when the arena ends. No C pointer outlives the arena's scope.
///
/// Measured against per-field mallocs and Swift-owned buffers (homed-bench wire),
/// a scope-owned arena was both the cleanest and the fastest way to feed
/// protobuf-c from Swift. Its memory is a
/// `ChunkChain`, whose first chunk comes from malloc's per-thread cache.
struct CArena: ~Copyable {
    private var chunks = ChunkChain()

    init() {}

    /// Uninitialized, suitably aligned memory for `count` values of `T`, bound to `T`.
    mutating func allocate<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        // Out of memory while encoding is not recoverable.
        let raw = chunks.allocate(
            byteCount: MemoryLayout<T>.stride * max(count, 1), alignment: MemoryLayout<T>.alignment)!
        return raw.bindMemory(to: T.self, capacity: max(count, 1))
    }

    /// A NUL-terminated copy of `string`. The empty string costs nothing.
    mutating func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        return string.withUTF8 { utf8 in
            let pointer = allocate(CChar.self, count: utf8.count + 1)
            if let base = utf8.baseAddress {
                UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: utf8.count)
            }
            pointer[utf8.count] = 0
            return pointer
        }
    }

    /// A copy of `bytes` as protobuf-c binary data.
    mutating func binary(_ bytes: some Collection<UInt8>) -> ProtobufCBinaryData {
        let count = bytes.count
        guard count > 0 else { return ProtobufCBinaryData(len: 0, data: nil) }
        let pointer = allocate(UInt8.self, count: count)
        _ = UnsafeMutableBufferPointer(start: pointer, count: count).initialize(from: bytes)
        return ProtobufCBinaryData(len: count, data: pointer)
    }

    /// A C array of `count` elements filled by `element(i)`; nil when empty, as protobuf-c expects.
    mutating func array<T>(_ type: T.Type, count: Int, _ element: (inout CArena, Int) -> T) -> UnsafeMutablePointer<T>?
    {
        guard count > 0 else { return nil }
        let pointer = allocate(T.self, count: count)
        for index in 0..<count {
            (pointer + index).initialize(to: element(&self, index))
        }
        return pointer
    }
}
