internal import CBenchFloor
@_spi(Wire) internal import HomeWire
internal import NIOCore
internal import NIOPosix

/// A second reference beside the C floor: the least a SwiftNIO server can do for a
/// round trip — split frames with homed's own `FrameDecoder` and echo each one back,
/// flushed at the end of the read, on the daemon's event loops. It answers the
/// floor's C client, so `homed`'s C-client figures minus this one are homed's own
/// cost, and this one minus the C floor is what the event loop costs on this machine.
enum NIOEchoFloor {
    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let body = unwrapInboundIn(data)
            var frame = context.channel.allocator.buffer(capacity: frameHeaderLength + body.readableBytes)
            frame.writeInteger(UInt32(body.readableBytes))
            frame.writeImmutableBuffer(body)
            context.write(wrapOutboundOut(frame), promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }
    }

    /// Round trips of a 64-byte frame from the C client to a bare NIO echo server.
    static func roundTrips(directory: String, iterations: Int) async throws -> Percentiles {
        let path = directory + "/nio-echo.sock"
        let channel = try await ServerBootstrap(group: Bench.daemonGroup)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .get()
        let request: [UInt8] = [0, 0, 0, 64] + [UInt8](repeating: 0x5a, count: 64)
        var latencies = [Double](repeating: 0, count: iterations)
        let status = cbf_client_round_trips(path, nil, 0, 0, request, request.count, 1, Int32(iterations), &latencies)
        try await channel.close()
        guard status == 0 else { throw BenchError("cbf_client_round_trips to the NIO echo server failed: \(status)") }
        return Percentiles(latencies)
    }
}
