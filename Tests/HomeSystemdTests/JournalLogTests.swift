import Foundation
import Logging
import Synchronization
import Testing

@testable import HomeSystemd

@Suite("journald log lines and the choice of format")
struct JournalLogTests {
    @Test("each level gets its syslog priority prefix, and there is no timestamp")
    func prefixes() {
        let expected: [(Logger.Level, String)] = [
            (.trace, "<7>"), (.debug, "<7>"), (.info, "<6>"), (.notice, "<5>"), (.warning, "<4>"), (.error, "<3>"),
            (.critical, "<2>"),
        ]
        for (level, prefix) in expected {
            #expect(
                JournalLogHandler.line(level: level, message: "opened the database", metadata: [:])
                    == "\(prefix)opened the database\n")
        }
    }

    @Test("metadata follows the message as key=value, sorted by key")
    func metadata() {
        let line = JournalLogHandler.line(
            level: .info, message: "opened the database",
            metadata: ["homes": "1", "database": "/var/lib/homed/homed.sqlite"])
        #expect(line == "<6>opened the database database=/var/lib/homed/homed.sqlite homes=1\n")
    }

    @Test("a newline or another control character in a message stays in one journal entry")
    func controlCharacters() {
        let line = JournalLogHandler.line(level: .warning, message: "two\nlines\u{1B}[31m", metadata: ["name": "a\tb"])
        #expect(line == "<4>two\\nlines\\x1b[31m name=a\\tb\n")
    }

    @Test("through a Logger: the handler's own metadata, the call's, and the level it was given")
    func throughLogger() {
        let written = Mutex<[String]>([])
        var logger = Logger(label: "homed") { _ in
            var handler = JournalLogHandler(metadataProvider: nil) { line in written.withLock { $0.append(line) } }
            handler.logLevel = .info
            return handler
        }
        logger[metadataKey: "connection"] = "7"
        logger.debug("not shown")
        logger.notice("client said hello", metadata: ["name": "homectl"])
        #expect(written.withLock { $0 } == ["<5>client said hello connection=7 name=homectl\n"])
    }

    @Test("auto is journal only when JOURNAL_STREAM names the very file stderr is")
    func journalStream() throws {
        let directory = try TemporaryDirectory()
        let fd = open(directory.path + "/stream", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer { close(fd) }
        var status = stat()
        #expect(fstat(fd, &status) == 0)
        #expect(LogFormat.isJournalStream("\(status.st_dev):\(status.st_ino)", fd: fd))
        #expect(!LogFormat.isJournalStream("\(status.st_dev):\(status.st_ino + 1)", fd: fd))
        #expect(!LogFormat.isJournalStream("nonsense", fd: fd))
        #expect(!LogFormat.isJournalStream(nil, fd: fd))

        #expect(LogFormat.auto.resolved(environment: [:]) == .human)
        #expect(LogFormat.auto.resolved(environment: ["JOURNAL_STREAM": "0:0"]) == .human)
        #expect(LogFormat.journal.resolved(environment: [:]) == .journal)
        #expect(LogFormat.human.resolved(environment: ["JOURNAL_STREAM": "0:0"]) == .human)
    }

    @Test("the factory makes journal handlers or StreamLogHandlers, at the level given")
    func factory() {
        let journal = LogFormat.journal.handlerFactory(level: .debug, environment: [:])("homed")
        #expect((journal as? LiveLevelLogHandler)?.inner is JournalLogHandler)
        #expect(journal.logLevel == .debug)
        let human = LogFormat.human.handlerFactory(level: .warning, environment: [:])("homed")
        #expect((human as? LiveLevelLogHandler)?.inner is StreamLogHandler)
        #expect(human.logLevel == .warning)
        #expect(LogFormat(rawValue: "journal") == .journal)
    }

    @Test("a live level changes every handler made with it, except one whose logger set its own")
    func liveLevel() {
        let live = LiveLogLevel(.info)
        let factory = LogFormat.journal.handlerFactory(level: live, environment: [:])
        let first = Logger(label: "first", factory: factory)
        var second = Logger(label: "second", factory: factory)
        second.logLevel = .error
        #expect(first.logLevel == .info)
        live.level = .debug
        #expect(first.logLevel == .debug)
        #expect(Logger(label: "later", factory: factory).logLevel == .debug)
        #expect(second.logLevel == .error)
    }
}
