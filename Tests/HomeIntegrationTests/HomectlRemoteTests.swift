import Foundation
import HomeTesting
import Testing

/// `homectl --nats URL … watch|get|set`: homectl becomes the NATS bridge's command
/// line (`homed-nats-remote`) with the same command, and its output and exit status
/// are that program's. The end-to-end run through a real nats-server is the NATS
/// bridge's suite (Clients/bridges/nats/tests/test_nats_cli.py); here a stand-in
/// program on PATH records what homectl hands it.
@Suite("homectl --nats", .timeLimit(.safetyNet))
struct HomectlRemoteTests {
    /// A directory holding a `homed-nats-remote` that writes its arguments, one per
    /// line, to `arguments` beside it, says "remote" and exits 7.
    private func standIn() throws -> String {
        let directory = TestServer.makeTemporaryDirectory("homectl-remote")
        let script = """
            #!/bin/sh
            printf '%s\\n' "$@" > "$(dirname "$0")/arguments"
            echo remote
            exit 7
            """
        let path = directory + "/homed-nats-remote"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return directory
    }

    private func homectl(path: String, _ arguments: String...) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try run(builtExecutable("homectl"), arguments, environment: ["PATH": path + ":/usr/bin:/bin"])
    }

    @Test("the command, its options and the connection's are handed on; output and exit status are the remote's")
    func handedOn() throws {
        let directory = try standIn()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let watch = try homectl(
            path: directory, "--nats", "nats://a:4222", "--nats=nats://b:4222", "--site", "cabin", "--json",
            "--home", "Cabin", "watch", "--room", "Kitchen", "-C", "3")
        #expect(watch.status == 7)
        #expect(watch.stdout == "remote\n")
        let handed = try String(contentsOfFile: directory + "/arguments", encoding: .utf8)
        #expect(
            handed.split(separator: "\n")
                == [
                    "--server", "nats://a:4222", "--server", "nats://b:4222", "--site", "cabin", "watch", "-o",
                    "json", "--home", "Cabin", "--room", "Kitchen", "-C", "3",
                ])

        // No -o: the remote command chooses as homectl does; the arguments after `--` stay values.
        let set = try homectl(
            path: directory, "--nats", "nats://a:4222", "--nats-creds", "/etc/c.creds", "set", "--if", "1",
            "Living Room/Lamp/On", "--", "-1")
        #expect(set.status == 7)
        let setHanded = try String(contentsOfFile: directory + "/arguments", encoding: .utf8)
        #expect(
            setHanded.split(separator: "\n")
                == [
                    "--server", "nats://a:4222", "--creds", "/etc/c.creds", "set", "--if", "1",
                    "Living Room/Lamp/On", "--", "-1",
                ])
    }

    @Test("a command that needs the socket, --socket with --nats, or no URL: usage (64), nothing run")
    func refused() throws {
        let directory = try standIn()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let show = try homectl(path: directory, "--nats", "nats://a:4222", "show", "Kitchen")
        #expect(show.status == 64)
        #expect(show.stderr.contains("show needs homed's socket; through NATS homectl runs watch, get and set"))
        let both = try homectl(path: directory, "--socket", "/run/x", "--nats", "nats://a:4222", "get", "1")
        #expect(both.status == 64)
        #expect(both.stderr.contains("--socket and --nats name two ways to reach homed; give one"))
        let empty = try homectl(path: directory, "--nats", "", "get", "1")
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("--nats needs a server's URL"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/arguments"))
    }

    @Test("without homed-nats-remote installed: unavailable (14), saying what is missing")
    func notInstalled() throws {
        let directory = TestServer.makeTemporaryDirectory("homectl-remote-none")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let get = try homectl(path: directory, "--nats", "nats://a:4222", "get", "Living Room/Lamp/On")
        #expect(get.status == 14)
        #expect(get.stderr.contains("--nats needs homed-nats-remote (the NATS bridge's command line)"), "\(get.stderr)")
    }
}
