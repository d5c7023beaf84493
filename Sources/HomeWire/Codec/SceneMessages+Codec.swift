public import HomeModel
public import NIOCore

extension ExecuteActionSetResponse: WireMessage {
    public func encode(into buffer: inout ByteBuffer) {
        Proto.ExecuteActionSetResponse(results: results.map(Proto.WriteResult.init), seq: seq)
            .serialize(into: &buffer)
    }

    @_spi(Wire) public init(wire bytes: UnsafeRawBufferPointer) throws(HomeError) {
        let wire = try Proto.ExecuteActionSetResponse(serialized: bytes)
        self.init(results: wire.results.map(WriteResult.init), seq: wire.seq)
    }
}
