internal import HomeModel
@_spi(Fuzzing) internal import HomeServer
internal import HomeTesting
@_spi(Wire) internal import HomeWire
internal import Logging
internal import NIOCore
internal import NIOEmbedded

#if canImport(Glibc)
    internal import Glibc
#endif

/// The demo home, made once; every input's store starts from it (cheap: the
/// graph's tables are copy-on-write), so an input's effect ends with it and a
/// crash reproduces from its input alone.
let demo = demoHome(nowMs: 1_700_000_000_000)

/// HOMED_FUZZ_TRACE=1 prints every frame the daemon writes: what an input (a seed,
/// a finding) makes the daemon answer.
let traceWrittenFrames = getenv("HOMED_FUZZ_TRACE").map { String(cString: $0) == "1" } ?? false

/// One connection of a real daemon, as `HomeServer.start()` wires it (router,
/// service, registry, providers) over a fresh in-memory store, driven through an
/// `EmbeddedChannel`: no socket, no threads, time that moves only when told.
///
/// Every frame the daemon writes must decode: a frame it cannot read back is a
/// finding, like a crash.
final class FuzzConnection {
    private let channel: EmbeddedChannel
    private var written = FrameDecoder(maxFrameSize: Int(UInt32.max))

    init(hello: Bool) {
        let loop = EmbeddedEventLoop()
        channel = EmbeddedChannel(loop: loop)
        let server = HomeServer(
            store: HomeStore(graph: demo, journalCapacity: 256), configuration: Self.configuration,
            logger: Logger(label: "homed-fuzz", factory: { _ in SwiftLogNoOpLogHandler() }),
            group: loop)
        do {
            try channel.pipeline.syncOperations.addHandler(server.makeConnectionHandler())
            try channel.connect(to: SocketAddress(unixDomainSocketPath: "/unused")).wait()
        } catch {
            fatalError("the embedded connection did not start: \(error)")
        }
        if hello {
            receive(WireFrame(callID: 0, body: .hello(Hello(clientName: "homed-fuzz"))).encoded())
        }
    }

    /// The daemon's limits, with every timeout short enough to fire within the
    /// second `finish()` moves the clock by: the hello, a partial frame, keepalive
    /// pings, a provider's answer and its liveness pings. (Moving it further costs
    /// more than it finds: a subscription may ask for a heartbeat every millisecond.)
    static let configuration: ServerConfiguration = {
        var configuration = ServerConfiguration(socketPath: "/unused")
        configuration.helloTimeoutMs = 500
        configuration.frameTimeoutMs = 500
        configuration.keepaliveIntervalMs = 300
        configuration.providerTimeoutMs = 500
        configuration.providerPingIntervalMs = 200
        configuration.providerPingTimeoutMs = 400
        return configuration
    }()

    var isOpen: Bool { channel.isActive }

    func receive(_ bytes: UnsafeBufferPointer<UInt8>) {
        receive(ByteBuffer(bytes: bytes))
    }

    /// Delivers bytes as the socket would, then checks what the daemon wrote.
    func receive(_ bytes: ByteBuffer) {
        guard channel.isActive else { return }
        // A write the handler refuses (it closed the connection) is the daemon's
        // answer to bad input, not a finding.
        _ = try? channel.writeInbound(bytes)
        checkWritten()
    }

    /// Lets every timer due within a second fire (call deadlines, the timeouts of
    /// `configuration`, a lingering close), then closes the connection and cancels
    /// the rest.
    func finish() {
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        checkWritten()
        _ = try? channel.finish(acceptAlreadyClosed: true)
        checkWritten()
    }

    private func checkWritten() {
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
            var buffer = buffer
            do {
                while let body = try written.decode(buffer: &buffer) {
                    let frame = try WireFrame(decoding: body)
                    if traceWrittenFrames { print("call \(frame.callID): \(frame.body)") }
                }
            } catch {
                fatalError("the daemon wrote a frame it cannot decode: \(error)")
            }
        }
    }
}
