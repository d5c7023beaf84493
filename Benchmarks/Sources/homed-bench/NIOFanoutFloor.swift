internal import CBenchFloor
internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// A second reference beside the C fan-out floor: the least a SwiftNIO server can
/// do to fan a change out. Each change is packed once (as homed packs a shared
/// event); then one task per event loop writes that same buffer to every
/// subscribed channel of the loop and flushes each, as homed's `LoopFlusher` does.
/// No store, filters, queues or policies. Read by the same C subscriber threads as
/// homed's C-subscriber variant, so the two differ only in the server.
enum NIOFanoutFloor {
    /// The subscribed channels, grouped by event loop.
    private final class Subscribers: Sendable {
        private let byLoop = Mutex<[(loop: any EventLoop, channels: [any Channel])]>([])

        func add(_ channel: any Channel) {
            byLoop.withLock { groups in
                if let index = groups.firstIndex(where: { $0.loop === channel.eventLoop }) {
                    groups[index].channels.append(channel)
                } else {
                    groups.append((channel.eventLoop, [channel]))
                }
            }
        }

        var groups: [(loop: any EventLoop, channels: [any Channel])] { byLoop.withLock { $0 } }
    }

    /// Answers a subscribe call with the SUBSCRIBED marker and registers the channel.
    private final class SubscribeHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let subscribers: Subscribers

        init(subscribers: Subscribers) {
            self.subscribers = subscribers
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard let frame = try? WireFrame(decoding: unwrapInboundIn(data)), case .open = frame.body else { return }
            var payload = ByteBuffer()
            SubscribeResponse(journalID: journalID, marker: StreamMarker(kind: .subscribed, seq: 0)).encode(
                into: &payload)
            var out = context.channel.allocator.buffer(capacity: payload.readableBytes + 16)
            WireFrame.encodeMessage(callID: frame.callID, payload: payload, into: &out)
            context.writeAndFlush(wrapOutboundOut(out), promise: nil)
            subscribers.add(context.channel)
        }
    }

    static let journalID = "nio-fanout-floor"

    static func run(directory: String, subscribers count: Int, rate: Int, durationMs: Int) async throws
        -> Fanout.Figures
    {
        let subscribers = Subscribers()
        let server = try await ServerBootstrap(group: Bench.daemonGroup)
            .serverChannelOption(.backlog, value: 256)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(SubscribeHandler(subscribers: subscribers))
                }
            }
            .bind(unixDomainSocketPath: directory + "/nio-fanout.sock", cleanupExistingSocketFile: true)
            .get()
        defer {
            for group in subscribers.groups { for channel in group.channels { channel.close(promise: nil) } }
            server.close(promise: nil)
        }
        return try await Fanout.cSubscribersFanout(
            socketPath: directory + "/nio-fanout.sock", subscriptionTo: 1,
            subscribers: count, rate: rate, durationMs: durationMs
        ) { changes in
            try await publish(to: subscribers, changes: changes, rate: rate)
        }
    }

    /// `changes` value events at `rate`, on the same absolute schedule as homed's writer.
    private static func publish(to subscribers: Subscribers, changes: Int, rate: Int) async throws -> Fanout.Publication
    {
        let groups = subscribers.groups
        let journalField = SubscribeResponse.journalField(journalID)
        let clock = ContinuousClock()
        var published: [UInt64: Int64] = [:]
        published.reserveCapacity(changes)
        let interval = Duration.nanoseconds(1_000_000_000 / Int64(rate))
        let start = clock.now
        for index in 0..<changes {
            let target = start + interval * index
            if clock.now < target { try await Task.sleep(until: target, clock: clock) }
            let seq = UInt64(index + 1)
            published[seq] = cbf_now_ns()
            let event = EncodedEvent(
                HomeEvent(
                    seq: seq, timeMs: 0, origin: .simulator,
                    body: .value(
                        ValueChange(
                            accessoryID: 1, serviceID: 1, characteristicID: 1, value: .int(Int64(index % 101))))))
            var frame = ByteBuffer()
            WireFrame.encodeMessageHeader(
                callID: 1, payloadLength: journalField.readableBytes + event.bytes.readableBytes,
                into: &frame)
            frame.writeImmutableBuffer(journalField)
            frame.writeImmutableBuffer(event.bytes)
            let shared = frame
            for group in groups {
                let channels = group.channels
                group.loop.execute {
                    for channel in channels {
                        channel.write(shared, promise: nil)
                        channel.flush()
                    }
                }
            }
        }
        return Fanout.Publication(published: published, unchanged: 0, seconds: seconds(clock.now - start))
    }
}
