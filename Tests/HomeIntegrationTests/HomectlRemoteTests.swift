import Foundation
import HomeTesting
import Testing

/// `homectl --nats URL … COMMAND`: homectl becomes `homed-nats-remote <the NATS
/// options> -- <this homectl> <the rest>`, which finds or starts the remote socket
/// and runs that homectl on it. The end-to-end run through a real nats-server is
/// the NATS bridge's suite (Clients/bridges/nats/tests/test_nats_homectl.py); here a
/// stand-in program on PATH records what homectl hands it.
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

    @Test("the NATS options go to homed-nats-remote, everything else to this homectl after --")
    func handedOn() throws {
        let directory = try standIn()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let built = URL(fileURLWithPath: builtExecutable("homectl")).resolvingSymlinksInPath().path
        let watch = try homectl(
            path: directory, "--nats", "nats://a:4222", "--nats=nats://b:4222", "--site", "cabin", "--json",
            "--home", "Cabin", "watch", "--room", "Kitchen", "-C", "3")
        #expect(watch.status == 7)
        #expect(watch.stdout == "remote\n")
        let handed = try String(contentsOfFile: directory + "/arguments", encoding: .utf8)
        #expect(
            handed.split(separator: "\n").map(String.init)
                == [
                    "--server", "nats://a:4222", "--server", "nats://b:4222", "--site", "cabin", "--", built,
                    "--json", "--home", "Cabin", "watch", "--room", "Kitchen", "-C", "3",
                ])

        // Any command; the arguments after `--` stay values; options after the command are NATS's too.
        let set = try homectl(
            path: directory, "set", "--if", "1", "--nats", "nats://a:4222", "--nats-creds", "/etc/c.creds",
            "--nats-js-prefix", "JS.HOME.API", "Living Room/Lamp/On", "--", "-1")
        #expect(set.status == 7)
        let setHanded = try String(contentsOfFile: directory + "/arguments", encoding: .utf8)
        #expect(
            setHanded.split(separator: "\n").map(String.init)
                == [
                    "--server", "nats://a:4222", "--creds", "/etc/c.creds", "--js-prefix", "JS.HOME.API", "--",
                    built, "set", "--if", "1", "Living Room/Lamp/On", "--", "-1",
                ])
    }

    @Test("--socket with --nats, or no URL: usage (64), nothing run")
    func refused() throws {
        let directory = try standIn()
        defer { try? FileManager.default.removeItem(atPath: directory) }
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
        #expect(
            get.stderr.contains("--nats needs homed-nats-remote (the NATS bridge's remote socket)"), "\(get.stderr)")
    }
}
