import Foundation
import HomeClient
import HomeModel
@_spi(Wire) import HomeTesting
@_spi(Wire) import HomeWire
import NIOCore
import Testing

/// A daemon played by hand on a socket of the test's own, to send what the real
/// daemon sends only in rare cases: a status on call 0.
final class ScriptedDaemon: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let thread: Thread

    /// Accepts one connection, answers its hello, then runs `script` with it.
    init(directory: String, script: @escaping @Sendable (_ fd: Int32, _ frames: inout FrameReader) throws -> Void)
        throws
    {
        let path = directory + "/scripted.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 1) == 0 else {
            close(listener)
            throw RawError("cannot listen on \(path): \(errno)")
        }
        self.path = path
        self.listener = listener
        thread = Thread {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var frames = FrameReader(fd: fd)
            guard (try? frames.next()) != nil else { return }  // the hello
            let reply = HelloReply(
                serverName: "scripted", serverVersion: "0", connectionID: 1, maxFrameSize: 65_536,
                journalID: "scripted")
            try? ScriptedDaemon.send(WireFrame(callID: 0, body: .helloReply(reply)), to: fd)
            try? script(fd, &frames)
        }
        thread.start()
    }

    deinit { close(listener) }

    static func send(_ frame: WireFrame, to fd: Int32) throws {
        let bytes = Array(frame.encoded().readableBytesView)
        guard bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count
        else { throw RawError("send failed: \(errno)") }
    }
}

/// Frames read from a blocking socket, one at a time.
struct FrameReader {
    let fd: Int32
    private var buffer = ByteBuffer()
    private var decoder = FrameDecoder()

    init(fd: Int32) { self.fd = fd }

    mutating func next() throws -> WireFrame? {
        while true {
            if let body = try decoder.decode(buffer: &buffer) { return try WireFrame(decoding: body) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count <= 0 { return nil }
            buffer.writeBytes(chunk[..<count])
        }
    }
}

@Suite("statuses on call 0, as the Swift client takes them", .timeLimit(.safetyNet))
struct ConnectionStatusTests {
    @Test("a status on call 0 that the daemon does not follow with a close leaves the calls alone")
    func notFatal() async throws {
        let directory = TestServer.makeTemporaryDirectory("scripted")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try ScriptedDaemon(directory: directory) { fd, frames in
            guard let open = try frames.next() else { return }
            // A refusal of some other frame, on call 0; then the call's own answer.
            try ScriptedDaemon.send(
                WireFrame(callID: 0, body: .status(HomeError(.alreadyExists, "call 1 is already open"))), to: fd)
            var status = GetStatusResponse()
            status.serverVersion = "answered"
            try ScriptedDaemon.send(WireFrame(callID: open.callID, body: .message(status.encoded())), to: fd)
            try ScriptedDaemon.send(WireFrame(callID: open.callID, body: .status(nil)), to: fd)
            _ = try frames.next()  // until the client goes
        }
        let client = try await HomeClient.connect(to: daemon.path, name: "test")
        #expect(try await client.status().serverVersion == "answered")
        await client.close()
    }

    @Test("a status on call 0 followed by a close fails the waiting calls with that status")
    func fatalWhenClosed() async throws {
        let directory = TestServer.makeTemporaryDirectory("scripted")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try ScriptedDaemon(directory: directory) { fd, frames in
            guard try frames.next() != nil else { return }
            try ScriptedDaemon.send(
                WireFrame(callID: 0, body: .status(HomeError(.resourceExhausted, "frame too large, closing"))), to: fd)
        }
        let client = try await HomeClient.connect(to: daemon.path, name: "test")
        let error = await #expect(throws: HomeError.self) { _ = try await client.status() }
        #expect(error == HomeError(.resourceExhausted, "frame too large, closing"))
        await client.close()
    }
}
