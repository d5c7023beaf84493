import Foundation
import Testing

@testable import HomeSystemd

/// `SystemdNotifier` in a probe process whose NOTIFY_SOCKET is a real notification
/// socket bound here (what systemd listens on). The variable is set for the probe
/// alone: in this process it would reach every daemon other tests start meanwhile.
@Suite(
    "sd_notify: what the service manager hears",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: probeExecutable), "build first: swift build --build-tests"))
struct NotifierTests {
    /// A datagram socket bound in a fresh directory.
    final class NotifySocket {
        let directory: TemporaryDirectory
        let path: String
        let fd: Int32

        init() throws {
            directory = try TemporaryDirectory()
            path = directory.path + "/notify"
            fd = try unixSocket(SOCK_DGRAM, at: path)
        }

        deinit { close(fd) }

        /// Every datagram queued (sd_notify has sent each when it returns), in order.
        func received() -> [String] {
            var messages: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                guard count >= 0 else { return messages }
                messages.append(String(decoding: buffer[..<count], as: UTF8.self))
            }
        }
    }

    func notify(_ actions: [String], socket: String?) throws -> ProbeResult {
        try spawn([probeExecutable, "notify"] + actions, environment: socket.map { ["NOTIFY_SOCKET": $0] } ?? [:])
    }

    @Test("ready says READY=1, with STATUS= when given; stopping says STOPPING=1; a status stays one line")
    func messages() throws {
        let socket = try NotifySocket()
        let result = try notify(
            ["ready=serving /run/homed/homed.sock", "ready", "status=saving\nvalues", "stopping"], socket: socket.path)
        #expect(result.stdout == "sent\nsent\nsent\nsent\n")
        #expect(result.stderr == "")
        #expect(
            socket.received() == [
                "READY=1\nSTATUS=serving /run/homed/homed.sock", "READY=1", "STATUS=saving values", "STOPPING=1",
            ])
    }

    @Test("reloading says RELOADING=1 with the monotonic clock's microseconds")
    func reloading() throws {
        let socket = try NotifySocket()
        let before = SystemdNotifier.monotonicMicroseconds()
        let result = try notify(["reloading"], socket: socket.path)
        let after = SystemdNotifier.monotonicMicroseconds()
        #expect(result.stdout == "sent\n")
        let fields = try #require(socket.received().first).split(separator: "\n")
        #expect(fields.count == 2)
        #expect(fields.first == "RELOADING=1")
        let stamp = try #require(fields.last?.split(separator: "=").last.flatMap { UInt64($0) })
        #expect(fields.last?.hasPrefix("MONOTONIC_USEC=") == true)
        #expect(stamp >= before && stamp <= after)
    }

    @Test("without NOTIFY_SOCKET nothing is sent and nothing is logged")
    func notUnderSystemd() throws {
        let result = try notify(["ready", "stopping"], socket: nil)
        #expect(result.stdout == "not under systemd\nnot under systemd\n")
        #expect(result.stderr == "")
        #expect(result.status == 0)
    }

    @Test("a NOTIFY_SOCKET that leads nowhere is a warning, once (then debug); the process carries on")
    func nowhere() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/gone"
        let result = try notify(["ready", "status=still here", "stopping"], socket: path)
        let message =
            "could not notify systemd through NOTIFY_SOCKET=\(path) (No such file or directory); "
            + "homed carries on without telling it"
        #expect(result.stdout == "failed: \(message)\n" + "failed: \(message)\n" + "failed: \(message)\n")
        #expect(
            result.stderr
                == "<4>\(message) notification=READY=1\n" + "<7>\(message) notification=STATUS=still here\n"
                + "<7>\(message) notification=STOPPING=1\n")
        #expect(result.status == 0)
    }
}
