internal import Foundation
internal import HomeModel
@_spi(Wire) internal import HomeTesting
@_spi(Wire) internal import HomeWire
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homed-bench idle-memory --homed PATH [--connections N]`: what the daemon itself
/// holds per idle subscriber. It starts `homed --demo --no-simulator --in-memory` in
/// a process of its own, reads its resident memory, opens N connections that each
/// say hello and subscribe (then never read again), reads it again, opens a second
/// subscription on each, and reads it a third time. Only the daemon's memory is
/// counted; the clients are plain blocking sockets in this process. Any homed binary
/// works, so the figure of an older build is measured the same way.
enum IdleMemory {
    static func run(homed: String, connections: Int) async throws {
        let directory = Bench.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/homed.sock"
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: homed)
        daemon.arguments = ["--demo", "--no-simulator", "--in-memory", "--socket", socketPath, "--log-level", "error"]
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: socketPath) { usleep(10_000) }
        // One connection first, so that what every connection shares (the event
        // loops' buffers, the first use of each code path) is not counted.
        var sockets = [try RawConnection(path: socketPath)]
        try sockets[0].send(WireFrame(callID: 0, body: .hello(Hello(clientName: "idle"))))
        try sockets[0].subscribe(callID: 1)
        usleep(200_000)
        let base = try residentKiB(pid: daemon.processIdentifier)
        for _ in 1..<connections {
            let socket = try RawConnection(path: socketPath)
            try socket.send(WireFrame(callID: 0, body: .hello(Hello(clientName: "idle"))))
            try socket.subscribe(callID: 1)
            sockets.append(socket)
        }
        usleep(500_000)
        let oneEach = try residentKiB(pid: daemon.processIdentifier)
        for socket in sockets { try socket.subscribe(callID: 2) }
        usleep(500_000)
        let twoEach = try residentKiB(pid: daemon.processIdentifier)
        let perConnection = Double(oneEach - base) / Double(connections - 1)
        let perExtra = Double(twoEach - oneEach) / Double(connections)
        print("idle-memory: \(homed), \(connections) connections, the daemon's resident memory only")
        print(row("daemon base", "\(base) KiB (one subscriber connected)"))
        print(row("per connection", String(format: "%.1f KiB (hello + one subscription; goal 16 KiB)", perConnection)))
        print(row("per extra sub", String(format: "%.1f KiB (a second subscription on it; goal 2 KiB)", perExtra)))
        _ = sockets
    }

    /// VmRSS of a process, from /proc.
    static func residentKiB(pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Int($0)
            })
        else { throw BenchError("no VmRSS for process \(pid)") }
        return value
    }
}

extension RawConnection {
    /// Opens a subscription to everything, and reads nothing.
    func subscribe(callID: UInt64) throws {
        try send(
            WireFrame(
                callID: callID,
                body: .open(
                    CallOpen(
                        method: HomeMethods.subscribe.name,
                        request: SubscribeRequest().encoded()))))
    }
}
