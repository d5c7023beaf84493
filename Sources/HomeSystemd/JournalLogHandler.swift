public import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

/// Log lines for journald: `<6>message key=value …` on stderr, one line per event.
/// The `<N>` prefix is the syslog priority (sd-daemon.h's SD_INFO and the rest), which
/// journald strips and keeps as the entry's PRIORITY; there is no timestamp (journald
/// stamps every entry) and no label (journald records the program's name).
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let write: @Sendable (String) -> Void

    /// A handler writing to stderr.
    public init(metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.init(metadataProvider: metadataProvider, write: { writeStandardError($0) })
    }

    /// A handler handing each finished line (newline included) to `write`.
    public init(metadataProvider: Logger.MetadataProvider?, write: @escaping @Sendable (String) -> Void) {
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        write(Self.line(level: event.level, message: "\(event.message)", metadata: merged))
    }

    /// One journal line: priority prefix, message, metadata sorted by key, newline.
    public static func line(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = prefix(for: level) + escaped(message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " " + escaped(key) + "=" + escaped("\(value)")
        }
        return line + "\n"
    }

    /// The syslog priority journald reads at the start of a line (sd-daemon.h's SD_DEBUG … SD_CRIT).
    public static func prefix(for level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: return "<7>"
        case .info: return "<6>"
        case .notice: return "<5>"
        case .warning: return "<4>"
        case .error: return "<3>"
        case .critical: return "<2>"
        }
    }

    /// journald cuts entries at newlines: a message's own newlines (and other control
    /// characters) are written as escapes so one event stays one entry.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// One write(2) per line: lines from several threads never interleave within a line.
private func writeStandardError(_ line: String) {
    var bytes = Array(line.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}
