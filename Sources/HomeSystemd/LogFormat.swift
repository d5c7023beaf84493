public import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

/// How the daemon writes its log: `--log-format auto|human|journal`.
public enum LogFormat: String, CaseIterable, Sendable {
    /// journal when stderr is journald's stream (JOURNAL_STREAM names it), else human.
    case auto
    /// swift-log's StreamLogHandler lines: timestamp, level, label, metadata, message.
    case human
    /// JournalLogHandler lines: `<6>message key=value`.
    case journal

    /// `auto` decided: journal when `environment`'s JOURNAL_STREAM is stderr's device
    /// and inode (a service's stderr connected to journald, not a program it started
    /// with its own stderr), else human.
    public func resolved(environment: [String: String]) -> LogFormat {
        guard self == .auto else { return self }
        return Self.isJournalStream(environment["JOURNAL_STREAM"], fd: 2) ? .journal : .human
    }

    /// The factory for `LoggingSystem.bootstrap`: handlers in this format at `level`.
    public func handlerFactory(level: Logger.Level, environment: [String: String])
        -> @Sendable (String) -> any LogHandler
    {
        handlerFactory(level: LiveLogLevel(level), environment: environment)
    }

    /// The same, at a level that may change while they run (a reload).
    public func handlerFactory(level: LiveLogLevel, environment: [String: String])
        -> @Sendable (String) -> any LogHandler
    {
        switch resolved(environment: environment) {
        case .journal:
            return { _ in LiveLevelLogHandler(JournalLogHandler(), live: level) }
        case .auto, .human:
            return { label in LiveLevelLogHandler(StreamLogHandler.standardError(label: label), live: level) }
        }
    }

    /// Whether JOURNAL_STREAM's "device:inode" is the file open at `fd`.
    static func isJournalStream(_ value: String?, fd: Int32) -> Bool {
        guard let value, let colon = value.firstIndex(of: ":"),
            let device = UInt64(value[..<colon]), let inode = UInt64(value[value.index(after: colon)...])
        else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
