internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

/// Reads an input as a sequence of method calls and frames each one as an open
/// call, so the fuzzer reaches every method's request decoder and handler without
/// first having to find the envelope and the method names.
///
/// Each record is: one byte naming the method (its low 7 bits modulo the number of
/// methods, in schema order; the high bit gives the call a 500 ms deadline), a 2-byte
/// little-endian length, then that many bytes of request message (fewer when the
/// input ends first). Calls take ids 1, 2, … so a later record can be a method that
/// needs an earlier one (a provider's register after its OpenProvider).
enum MethodCalls {
    static let methods = HomeMethods.schemaMethodNames

    static func frames(from input: UnsafeBufferPointer<UInt8>) -> [ByteBuffer] {
        var frames: [ByteBuffer] = []
        var rest = input[...]
        var callID: UInt64 = 1
        while let head = rest.first {
            rest = rest.dropFirst()
            let low = rest.popFirst() ?? 0
            let high = rest.popFirst() ?? 0
            let length = min(Int(low) | Int(high) << 8, rest.count)
            let request = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            let open = CallOpen(
                method: methods[Int(head & 0x7f) % methods.count], request: request,
                timeoutMs: head & 0x80 == 0 ? nil : 500)
            frames.append(WireFrame(callID: callID, body: .open(open)).encoded())
            callID += 1
        }
        return frames
    }
}
