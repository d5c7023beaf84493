internal import CHomeProto
internal import HomeModel
internal import NIOCore

// The bridge between protobuf-c and Swift. Everything that touches a C message
// tree goes through these helpers, so no C pointer leaves this module and every
// unpacked tree is freed.

/// Packs a protobuf-c message (anything whose first member is `ProtobufCMessage base`)
/// into `buffer`, optionally preceded by the 4-byte frame header.
func packMessage<M>(_ message: UnsafeMutablePointer<M>, into buffer: inout ByteBuffer, withFrameHeader: Bool) {
    let base = UnsafeMutableRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    let size = protobuf_c_message_get_packed_size(base)
    // One allocation of the right size, not a default one grown twice.
    buffer.reserveCapacity(minimumWritableBytes: size + (withFrameHeader ? 4 : 0))
    if withFrameHeader {
        buffer.writeInteger(UInt32(truncatingIfNeeded: size))
    }
    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
        protobuf_c_message_pack(base, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
}

/// Packs a protobuf-c message into a byte array.
func packMessage<M>(_ message: UnsafeMutablePointer<M>) -> [UInt8] {
    let base = UnsafeMutableRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    let size = protobuf_c_message_get_packed_size(base)
    return [UInt8](unsafeUninitializedCapacity: size) { out, count in
        count = protobuf_c_message_pack(base, out.baseAddress!)
    }
}

typealias Unpacker<M> = (UnsafeMutablePointer<ProtobufCAllocator>?, Int, UnsafePointer<UInt8>?) -> UnsafeMutablePointer<
    M
>?
typealias Freer<M> = (UnsafeMutablePointer<M>?, UnsafeMutablePointer<ProtobufCAllocator>?) -> Void

/// Unpacks `bytes` as message `M`, checks every string field is valid UTF-8 without
/// NUL bytes (protobuf-c checks neither), hands the tree to `body`, and frees it
/// (the tree lives in an `UnpackArena`, so `free` is not needed; it stays in the
/// signature so each call names the message's own pair of functions).
///
/// - Parameter what: the message's full name, for the error a malformed message gets.
///
/// - Parameter checkStrings: false only for messages the daemon sent to a client:
///   every string in them was checked when it entered the daemon.
func withUnpacked<M, R>(
    _ bytes: UnsafeRawBufferPointer,
    as what: String,
    unpack: Unpacker<M>,
    free: Freer<M>,
    checkStrings: Bool = true,
    _ body: (UnsafePointer<M>) throws(HomeError) -> R
) throws(HomeError) -> R {
    try UnpackArena.withAllocator { allocator throws(HomeError) -> R in
        guard let message = unpack(allocator, bytes.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        else {
            throw HomeError(.invalidArgument, "malformed \(what): \(bytes.count) bytes do not decode as this message")
        }
        if checkStrings {
            let descriptor = UnsafeRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self).pointee
                .descriptor!
            try StringFieldCheck.check(bytes, descriptor: descriptor, path: what)
        }
        return try body(UnsafePointer(message))
    }
}

/// A Swift string from a protobuf-c string field, which `StringFieldCheck` has
/// already validated. A NULL field (never the case for proto3 strings) is "".
@inline(__always)
func swiftString(_ pointer: UnsafePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(cString: pointer)
}

@inline(__always)
func swiftBytes(_ data: ProtobufCBinaryData) -> [UInt8] {
    guard data.len > 0, let base = data.data else { return [] }
    return Array(UnsafeBufferPointer(start: base, count: data.len))
}

@inline(__always)
func swiftArray<T, R>(_ pointer: UnsafeMutablePointer<T>?, _ count: Int, _ transform: (T) throws(HomeError) -> R)
    throws(HomeError) -> [R]
{
    guard count > 0, let pointer else { return [] }
    var result: [R] = []
    result.reserveCapacity(count)
    for index in 0..<count {
        result.append(try transform(pointer[index]))
    }
    return result
}

/// Maps a Swift enum to a protobuf enum number by declaration order plus an offset;
/// the schema declares the cases in the same order (checked by tests).
extension CaseIterable where Self: Equatable, AllCases == [Self] {
    @inline(__always)
    func wireNumber(offset: UInt32 = 0) -> UInt32 {
        UInt32(Self.allCases.firstIndex(of: self)!) + offset
    }

    /// For what the daemon sent a client: a newer daemon may send a value this
    /// build does not know, and the client carries on with `fallback`.
    @inline(__always)
    static func fromWire(_ number: UInt32, offset: UInt32 = 0, default fallback: Self) -> Self {
        guard number >= offset, Int(number - offset) < allCases.count else { return fallback }
        return allCases[Int(number - offset)]
    }

    /// For what a client sent the daemon: a number the schema does not declare is
    /// refused, never read as some default.
    ///
    /// - Throws: `.invalidArgument` naming the field and the number.
    static func fromWire(_ number: UInt32, offset: UInt32 = 0, field: String) throws(HomeError) -> Self {
        guard number >= offset, Int(number - offset) < allCases.count else {
            throw HomeError(.invalidArgument, "\(field): unknown value \(number), not one the schema defines")
        }
        return allCases[Int(number - offset)]
    }
}
