internal import HomeModel
@_spi(Wire) public import HomeWire
internal import NIOCore

extension HomeClient {
    /// Asks the daemon for a consistent copy of its database (admin only): the
    /// copy's bytes arrive as chunks, in order; the sequence ends once the last has
    /// come and the call ended OK, and throws the call's error otherwise
    /// (PERMISSION_DENIED, FAILED_PRECONDITION for a daemon in memory, …).
    public func backup() -> BackupChunks {
        let callID = makeCallID()
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        let open = CallOpen(method: HomeMethods.backup.name, request: BackupRequest().encoded())
        let handler = self.handler
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                handler.eventLoop.execute { handler.value.cancel(callID: callID) }
            }
        }
        handler.eventLoop.execute {
            handler.value.startRawStream(callID: callID, open: open, continuation: continuation)
        }
        return BackupChunks(base: stream)
    }
}

/// The chunks of a backup, decoded.
public struct BackupChunks: AsyncSequence, Sendable {
    public typealias Element = BackupChunk
    let base: AsyncThrowingStream<[UInt8], any Error>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator

        public mutating func next() async throws -> BackupChunk? {
            guard let payload = try await base.next() else { return nil }
            return try BackupChunk(wire: payload)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}
