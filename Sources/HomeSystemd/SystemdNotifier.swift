internal import CSystemd
public import Logging
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Tells the service manager how the daemon is doing, through `sd_notify`: ready,
/// reloading, stopping, a status line. Outside systemd (`NOTIFY_SOCKET` unset) every
/// call does nothing. When systemd cannot be told (the socket is gone, not ours), the
/// daemon carries on: the first failure is logged as a warning, later ones at debug
/// level, and every call returns what happened.
public final class SystemdNotifier: Sendable {
    /// What became of one notification.
    public enum Outcome: Equatable, Sendable {
        /// The service manager has the message.
        case sent
        /// `NOTIFY_SOCKET` is unset: not started by systemd with Type=notify; nothing to do.
        case notUnderSystemd
        /// It could not be sent; the sentence says where to and why.
        case failed(String)
    }

    private let logger: Logger
    private let warned = Atomic<Bool>(false)

    public init(logger: Logger) {
        self.logger = logger
    }

    /// The daemon serves (READY=1), with an optional status line. Also ends a reload.
    @discardableResult
    public func ready(status: String? = nil) -> Outcome {
        send(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// The daemon is shutting down (STOPPING=1).
    @discardableResult
    public func stopping() -> Outcome {
        send(["STOPPING=1"])
    }

    /// The daemon begins reloading its configuration (RELOADING=1). Call `ready()` when
    /// it is done. MONOTONIC_USEC lets a manager that wants it (Type=notify-reload)
    /// tell this reload from an earlier one; older managers ignore the field.
    @discardableResult
    public func reloading() -> Outcome {
        send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"])
    }

    /// A status line for `systemctl status` (STATUS=…).
    @discardableResult
    public func status(_ text: String) -> Outcome {
        send(["STATUS=" + Self.oneLine(text)])
    }

    /// Sends `fields` (each `KEY=value`, no newlines) as one notification.
    @discardableResult
    public func send(_ fields: [String]) -> Outcome {
        let result = sd_notify(0, fields.joined(separator: "\n"))
        if result > 0 { return .sent }
        if result == 0 { return .notUnderSystemd }
        let socket = getenv("NOTIFY_SOCKET").map { String(cString: $0) } ?? "?"
        let reason = String(cString: strerror(-result))
        let message =
            "could not notify systemd through NOTIFY_SOCKET=\(socket) (\(reason)); homed carries on without telling it"
        // The first failure matters to whoever reads the log; the same failure on every
        // status line would only bury it.
        let level: Logger.Level = warned.exchange(true, ordering: .relaxed) ? .debug : .warning
        logger.log(level: level, "\(message)", metadata: ["notification": "\(fields.joined(separator: " "))"])
        return .failed(message)
    }

    /// A newline would end the field and start another: status text is one line.
    static func oneLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar == "\n" || scalar == "\r" ? " " : scalar)
        }
        return String(scalars)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
