import Foundation
@_spi(Wire) import HomeTesting
import Testing

/// `homectl homekit …` runs the HomeKit provider's own pairing commands; no daemon
/// is involved, so none is started here.
@Suite("homectl homekit", .timeLimit(.safetyNet))
struct HomeKitCLITests {
    /// A scratch directory, removed at the end of the test that made it.
    private final class Scratch {
        let path = TestServer.makeTemporaryDirectory("homectl-homekit")
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// An executable shell script at `name` in the directory.
        @discardableResult
        func script(_ name: String, _ body: String, mode: Int = 0o755) throws -> String {
            let file = path + "/" + name
            try ("#!/bin/sh\n" + body + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
            return file
        }
    }

    /// homectl with only this PATH and HOMED_HOMEKIT_PROVIDER ("" counts as unset).
    private func homekit(_ arguments: [String], path: String, provider: String = "") throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try run(
            builtExecutable("homectl"), ["homekit"] + arguments,
            environment: ["PATH": path, "HOMED_HOMEKIT_PROVIDER": provider])
    }

    @Test("homed-homekit-provider on PATH runs with the arguments as given; its output and exit status are homectl's")
    func passesThrough() throws {
        let scratch = Scratch()
        try scratch.script("homed-homekit-provider", "printf '%s\\n' \"$@\"\necho 'said on stderr' >&2\nexit 3")
        let result = try homekit(
            ["pair", "127.0.0.1:51826", "--code-file", "/tmp/a code", "--state-dir", "/s"],
            path: "/nonexistent:" + scratch.path)
        #expect(result.status == 3)
        #expect(result.stdout == "pair\n127.0.0.1:51826\n--code-file\n/tmp/a code\n--state-dir\n/s\n")
        #expect(result.stderr == "said on stderr\n")
        // $HOMED_HOMEKIT_PROVIDER comes first.
        let other = try scratch.script("other-provider", "echo \"other $1\"")
        let list = try homekit(["list"], path: scratch.path, provider: other)
        #expect(list.status == 0 && list.stdout == "other list\n", "\(list.stderr)")
        // homectl's options for the daemon, given before `homekit`, are not passed on:
        // the pairing commands do not talk to the daemon.
        let global = try run(
            builtExecutable("homectl"),
            ["--socket", "/run/x.sock", "--timeout=3", "homekit", "list", "--state-dir", "/s"],
            environment: ["PATH": scratch.path, "HOMED_HOMEKIT_PROVIDER": other])
        #expect(global.status == 0 && global.stdout == "other list\n", "\(global.stderr)")
    }

    @Test("not installed: exit 69 saying what was looked for")
    func notInstalled() throws {
        let scratch = Scratch()
        let result = try homekit(["list"], path: scratch.path)
        #expect(result.status == 69)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "homectl: the HomeKit provider is not installed: no homed-homekit-provider on PATH, and "
                + "HOMED_HOMEKIT_PROVIDER is not set (install it as Clients/providers/homekit/README.md says, or "
                + "set HOMED_HOMEKIT_PROVIDER to its program)\n")
        // A file that is not executable is not the program.
        let plain = try scratch.script("homed-homekit-provider", "exit 0", mode: 0o644)
        #expect(try homekit(["list"], path: scratch.path).status == 69)
        let named = try homekit(["list"], path: scratch.path, provider: plain)
        #expect(named.status == 69)
        #expect(named.stderr.hasPrefix("homectl: HOMED_HOMEKIT_PROVIDER names \(plain), which cannot be run ("))
    }

    @Test("a command the provider does not take here is refused: exit 64 naming the four")
    func unknownCommand() throws {
        let scratch = Scratch()
        try scratch.script("homed-homekit-provider", "echo ran")
        for arguments in [["run"], ["frobnicate"], []] {
            let result = try homekit(arguments, path: scratch.path)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments): the provider ran")
            #expect(result.stderr.contains("homekit takes pair, unpair, list, discover"), "\(result.stderr)")
        }
    }

    @Test("the real provider (Clients/providers/homekit): list of an empty state directory, a malformed address")
    func realProvider() throws {
        let scratch = Scratch()
        // As installed: the command in the test venv (Scripts/test.sh puts .venv/bin on PATH).
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").map { "\($0)/homed-homekit-provider" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        let program = try #require(found, "homed-homekit-provider is not on PATH: run Scripts/bootstrap.sh --python")
        let list = try homekit(["list", "--state-dir", scratch.path], path: path, provider: program)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.isEmpty)
        let pair = try homekit(["pair", "nonsense", "--state-dir", scratch.path], path: path, provider: program)
        #expect(pair.status == 64)
        #expect(pair.stderr.contains("'nonsense' is not HOST:PORT"), "\(pair.stderr)")
    }
}
