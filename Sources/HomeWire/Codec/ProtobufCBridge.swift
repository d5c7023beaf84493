internal import CHomeProto
internal import HomeModel
internal import NIOCore

// The runtime of the protobuf-c bridge: what the generated code
// (Generated/home_v1.wire.swift) calls to pack, unpack and copy. Everything
// that touches a C message tree goes through here or through the generated
// code, so no C pointer leaves this module and every unpacked tree is freed.

/// A Swift type generated for one protobuf-c message (a mirror, a public message,
/// or a model type converted by TABLED_MESSAGES in Scripts/generate-swift-wire.py).
protocol ProtobufCBridged {
    associatedtype CMessage
    /// The message's full name, for the error a malformed one gets.
    static var messageName: String { get }
    static var unpack: Unpacker<CMessage> { get }
    /// Copies an unpacked C tree; a public message converts the model's types it
    /// carries on the way, and checks a client's enum numbers.
    init(c message: CMessage) throws(HomeError)
    /// Builds the C tree in `arena`, which owns every allocation.
    func build(in arena: inout CArena) -> UnsafeMutablePointer<CMessage>
}

extension ProtobufCBridged {
    /// Appends the message's encoding (no frame header) to `buffer`.
    func serialize(into buffer: inout ByteBuffer) {
        var arena = CArena()
        packMessage(build(in: &arena), into: &buffer, withFrameHeader: false)
    }

    /// - Parameter checkStrings: false only for messages the daemon sent to a
    ///   client: every string in them was checked when it entered the daemon.
    /// - Throws: `.invalidArgument` when the bytes do not decode as this message
    ///   or a string in it is not valid UTF-8 or holds a NUL byte.
    init(serialized bytes: UnsafeRawBufferPointer, checkStrings: Bool = true) throws(HomeError) {
        self = try withUnpacked(bytes, as: Self.messageName, unpack: Self.unpack, checkStrings: checkStrings) {
            message throws(HomeError) in try Self(c: message.pointee)
        }
    }
}

/// A model type (HomeModel) that messages of the schema carry: converted to and
/// from its generated mirror here, once, by hand (what the model means is no
/// generator's business); every generated message that carries it calls this
/// conversion (MODEL_MESSAGES in Scripts/generate-swift-wire.py).
protocol WireConvertible {
    associatedtype Wire: ProtobufCBridged
    init(wire: Wire) throws(HomeError)
    var wire: Wire { get }
}

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

typealias Unpacker<M> = (UnsafeMutablePointer<ProtobufCAllocator>?, Int, UnsafePointer<UInt8>?) -> UnsafeMutablePointer<
    M
>?

/// Unpacks `bytes` as message `M`, checks every string field is valid UTF-8 without
/// NUL bytes (protobuf-c checks neither), and hands the tree to `body`. The tree
/// lives in an `UnpackArena`, released when `body` returns.
///
/// - Parameter what: the message's full name, for the error a malformed message gets.
func withUnpacked<M, R>(
    _ bytes: UnsafeRawBufferPointer,
    as what: String,
    unpack: Unpacker<M>,
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

/// A repeated scalar field, copied.
@inline(__always)
func copiedArray<T>(_ pointer: UnsafeMutablePointer<T>?, _ count: Int) -> [T] {
    guard count > 0, let pointer else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: count))
}

/// A repeated field, each element converted.
@inline(__always)
func mappedArray<T, R, E: Error>(_ pointer: UnsafeMutablePointer<T>?, _ count: Int, _ transform: (T) throws(E) -> R)
    throws(E) -> [R]
{
    guard count > 0, let pointer else { return [] }
    var result: [R] = []
    result.reserveCapacity(count)
    for index in 0..<count {
        result.append(try transform(pointer[index]))
    }
    return result
}

/// A Swift enum with a generated table of its protobuf enum numbers.
protocol WireEnum {
    var wireNumber: UInt32 { get }
    init?(wireNumber: UInt32)
}

extension WireEnum {
    /// For what the daemon sent a client: a newer daemon may send a value this
    /// build does not know, and the client carries on with `fallback`.
    @inline(__always)
    static func fromWire(_ number: UInt32, default fallback: Self) -> Self {
        Self(wireNumber: number) ?? fallback
    }

    /// For what a client sent the daemon: a number the schema does not declare is
    /// refused, never read as some default.
    ///
    /// - Throws: `.invalidArgument` naming the field and the number.
    static func fromWire(_ number: UInt32, field: String) throws(HomeError) -> Self {
        guard let value = Self(wireNumber: number) else {
            throw HomeError(.invalidArgument, "\(field): unknown value \(number), not one the schema defines")
        }
        return value
    }
}

extension HomeError {
    /// The error a `StatusCode` number and message stand for; nil for OK.
    static func fromWire(code: UInt32, message: String) -> HomeError? {
        HomeError.Code(wireValue: Int(code)).map { HomeError($0, message) }
    }
}
