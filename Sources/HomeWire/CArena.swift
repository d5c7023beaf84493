internal import CHomeProto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one owner of every C allocation made while building a protobuf-c message
/// tree for encoding: a bump allocator over malloc'd chunks, all freed together
/// when the arena ends. No C pointer outlives the arena's scope.
///
/// Measured on this machine (see shared/notes): a scope-owned arena was both the
/// cleanest and the fastest way to feed protobuf-c from Swift.
struct CArena: ~Copyable {
    private static let chunkSize = 16 * 1024
    private var chunks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0

    init() {}

    deinit {
        for chunk in chunks { free(chunk) }
    }

    /// Uninitialized, suitably aligned memory for `count` values of `T`, bound to `T`.
    mutating func allocate<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        let raw = allocateRaw(byteCount: MemoryLayout<T>.stride * max(count, 1), alignment: MemoryLayout<T>.alignment)
        return raw.bindMemory(to: T.self, capacity: max(count, 1))
    }

    private mutating func allocateRaw(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
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
        if byteCount > Self.chunkSize / 4 {
            // Large blocks get their own allocation so they don't waste a chunk.
            let block = malloc(byteCount)!
            chunks.append(block)
            return block
        }
        let chunk = malloc(Self.chunkSize)!
        chunks.append(chunk)
        cursor = chunk + byteCount
        remaining = Self.chunkSize - byteCount
        return chunk
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
    mutating func array<T>(_ type: T.Type, count: Int, _ element: (inout CArena, Int) -> T) -> UnsafeMutablePointer<T>? {
        guard count > 0 else { return nil }
        let pointer = allocate(T.self, count: count)
        for index in 0..<count {
            (pointer + index).initialize(to: element(&self, index))
        }
        return pointer
    }
}
