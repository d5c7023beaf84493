internal import HomeWire

/// libFuzzer's entry point: one input is one connection to a fresh daemon.
///
/// The first byte chooses how the rest reaches the connection (see `Mode`), so one
/// corpus holds raw byte streams for the frame decoder and the envelope, and
/// method calls for each request message's decoder and handler.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let first = input.first else { return 0 }
    let rest = UnsafeBufferPointer(rebasing: input.dropFirst())
    let mode = Mode(rawValue: first % Mode.count)!
    let connection = FuzzConnection(hello: mode != .rawWithoutHello)
    switch mode {
    case .raw, .rawWithoutHello:
        connection.receive(rest)
    case .rawChunked:
        // The next byte is the chunk size, so frames arrive split at every boundary.
        guard let chunkByte = rest.first else { break }
        let chunkSize = Int(chunkByte) + 1
        var chunks = UnsafeBufferPointer(rebasing: rest.dropFirst())
        while !chunks.isEmpty && connection.isOpen {
            let count = min(chunkSize, chunks.count)
            connection.receive(UnsafeBufferPointer(rebasing: chunks.prefix(count)))
            chunks = UnsafeBufferPointer(rebasing: chunks.dropFirst(count))
        }
    case .calls:
        for frame in MethodCalls.frames(from: rest) where connection.isOpen {
            connection.receive(frame)
        }
    }
    connection.finish()
    return 0
}

/// What the first byte of an input (modulo `count`) says the rest is.
enum Mode: UInt8 {
    /// Bytes as a client sends them, after a valid hello.
    case raw = 0
    /// The same, delivered in chunks of the size the next byte gives (1...256).
    case rawChunked = 1
    /// Method calls (`MethodCalls`), each wrapped in a valid frame, after a valid hello.
    case calls = 2
    /// Bytes as a client sends them from the start: the hello is the input's own.
    case rawWithoutHello = 3

    static let count: UInt8 = 4
}
