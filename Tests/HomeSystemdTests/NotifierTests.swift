import Foundation
import Logging
import Synchronization
import Testing

@testable import HomeSystemd

/// `SystemdNotifier` against a real notification socket (what systemd listens on),
/// given as NOTIFY_SOCKET in this process's environment: serialized, since every
/// test sets it.
@Suite("sd_notify: what the service manager hears", .serialized)
struct NotifierTests {
    /// A datagram socket bound in a fresh directory, named by NOTIFY_SOCKET while it lives.
    final class NotifySocket {
        let directory: TemporaryDirectory
        let path: String
        let fd: Int32

        init() throws {
            directory = try TemporaryDirectory()
            path = directory.path + "/notify"
            fd = try unixSocket(SOCK_DGRAM, at: path)
            setenv("NOTIFY_SOCKET", path, 1)
        }

        deinit {
            unsetenv("NOTIFY_SOCKET")
            close(fd)
        }

        /// The datagram sd_notify queued (it has been sent when sd_notify returns); nil if none.
        func received() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count >= 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    @Test("ready, with a status line, says READY=1 and STATUS=")
    func ready() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(logger: Logger(label: "test"))
        #expect(notifier.ready(status: "serving /run/homed/homed.sock") == .sent)
        #expect(socket.received() == "READY=1\nSTATUS=serving /run/homed/homed.sock")
        #expect(notifier.ready() == .sent)
        #expect(socket.received() == "READY=1")
    }

    @Test("stopping says STOPPING=1; a status line stays one line")
    func stoppingAndStatus() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(logger: Logger(label: "test"))
        #expect(notifier.stopping() == .sent)
        #expect(socket.received() == "STOPPING=1")
        #expect(notifier.status("saving\nvalues") == .sent)
        #expect(socket.received() == "STATUS=saving values")
    }

    @Test("reloading says RELOADING=1 with the monotonic clock's microseconds")
    func reloading() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(logger: Logger(label: "test"))
        let before = SystemdNotifier.monotonicMicroseconds()
        #expect(notifier.reloading() == .sent)
        let fields = try #require(socket.received()).split(separator: "\n")
        #expect(fields.first == "RELOADING=1")
        let stamp = try #require(fields.last?.split(separator: "=").last.flatMap { UInt64($0) })
        #expect(fields.count == 2 && fields[1].hasPrefix("MONOTONIC_USEC="))
        #expect(stamp >= before && stamp <= SystemdNotifier.monotonicMicroseconds())
    }

    @Test("without NOTIFY_SOCKET nothing is sent and nothing is logged")
    func notUnderSystemd() {
        unsetenv("NOTIFY_SOCKET")
        let log = CapturedLog()
        let notifier = SystemdNotifier(logger: log.logger)
        #expect(notifier.ready() == .notUnderSystemd)
        #expect(notifier.stopping() == .notUnderSystemd)
        #expect(log.lines.isEmpty)
    }

    @Test("a NOTIFY_SOCKET that leads nowhere is a warning, once; the daemon carries on")
    func nowhere() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/gone"
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let log = CapturedLog()
        let notifier = SystemdNotifier(logger: log.logger)
        let expected =
            "could not notify systemd through NOTIFY_SOCKET=\(path) (No such file or directory); "
            + "homed carries on without telling it"
        #expect(notifier.ready() == .failed(expected))
        #expect(notifier.status("still here") == .failed(expected))
        #expect(log.lines == ["warning \(expected)", "debug \(expected)"])
    }
}

/// Log events kept in memory, as "level message".
final class CapturedLog: Sendable {
    private let captured = Mutex<[String]>([])

    var lines: [String] { captured.withLock { $0 } }

    var logger: Logger {
        Logger(label: "test") { _ in
            var handler = JournalLogHandler(metadataProvider: nil) { _ in }
            handler.logLevel = .trace
            return CapturingHandler(inner: handler, log: self)
        }
    }

    fileprivate func append(_ line: String) { captured.withLock { $0.append(line) } }
}

private struct CapturingHandler: LogHandler {
    var inner: JournalLogHandler
    let log: CapturedLog

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) { log.append("\(event.level) \(event.message)") }
}
