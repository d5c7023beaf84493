import Foundation
import HomeModel
import Testing

@testable import HomeSystemd

/// `SystemdSockets.listenFDs()` in a child process started as systemd starts a
/// socket-activated service (the test process's own fd 3 belongs to someone else).
@Suite(
    "socket activation: the socket systemd passes",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: probeExecutable), "build first: swift build --build-tests"))
struct SocketActivationTests {
    @Test(
        "a listening Unix stream socket at fd 3 is adopted with its name and path, and LISTEN_* leave the environment")
    func listeningSocket() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/homed.sock"
        let listener = try unixSocket(SOCK_STREAM, at: path, listening: true)
        defer { close(listener) }
        let result = try runProbe(passing: [listener], names: ["homed"])
        #expect(result.stderr == "")
        #expect(result.stdout == "fd=3 name=homed path=\(path) environment=cleared\n")
        #expect(result.status == 0)
    }

    @Test("without LISTEN_FDS, or with LISTEN_PID naming another process, there is nothing to adopt")
    func notActivated() throws {
        let unset = try spawn([probeExecutable, "listen"])
        #expect(unset.stdout == "not activated\n")
        #expect(unset.status == 0)

        let directory = try TemporaryDirectory()
        let listener = try unixSocket(SOCK_STREAM, at: directory.path + "/homed.sock", listening: true)
        defer { close(listener) }
        let someoneElses = try runProbe(passing: [listener], otherPID: true)
        #expect(someoneElses.stdout == "not activated\n")
        #expect(someoneElses.status == 0)
    }

    @Test("a UDP socket at fd 3 is refused, saying what it is")
    func udp() throws {
        let udp = try udpSocket()
        defer { close(udp) }
        let result = try runProbe(passing: [udp])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "systemd-probe: fd 3 from systemd is not a listening Unix stream socket (it is a UDP socket (IPv4))\n"
        )
    }

    @Test("a regular file at fd 3 is refused, saying what it is")
    func regularFile() throws {
        let directory = try TemporaryDirectory()
        let file = open(directory.path + "/not-a-socket", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer { close(file) }
        let result = try runProbe(passing: [file])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("fd 3 from systemd is not a listening Unix stream socket (it is a regular file)"))
    }

    @Test("a Unix datagram socket, and a stream socket that does not listen, are refused")
    func wrongUnixSockets() throws {
        let directory = try TemporaryDirectory()
        let datagram = try unixSocket(SOCK_DGRAM, at: directory.path + "/dgram.sock")
        defer { close(datagram) }
        let refusedDatagram = try runProbe(passing: [datagram])
        #expect(refusedDatagram.status == 1)
        #expect(refusedDatagram.stderr.contains("(it is a Unix datagram socket)"))

        let unlistened = try unixSocket(SOCK_STREAM, at: directory.path + "/quiet.sock")
        defer { close(unlistened) }
        let refusedStream = try runProbe(passing: [unlistened])
        #expect(refusedStream.status == 1)
        #expect(refusedStream.stderr.contains("(it is a Unix stream socket that is not listening)"))
    }

    @Test("two sockets are refused: homed listens on exactly one")
    func twoSockets() throws {
        let directory = try TemporaryDirectory()
        let first = try unixSocket(SOCK_STREAM, at: directory.path + "/one.sock", listening: true)
        let second = try unixSocket(SOCK_STREAM, at: directory.path + "/two.sock", listening: true)
        defer {
            close(first)
            close(second)
        }
        let result = try runProbe(passing: [first, second], names: ["homed", "extra"])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "systemd-probe: systemd passed 2 sockets (homed, extra), fds 3 to 4; homed listens on exactly one: "
                + "give homed.socket a single ListenStream=\n")
    }

    @Test(
        "under the real systemd-socket-activate, the socket it listens on is adopted",
        .enabled(if: FileManager.default.isExecutableFile(atPath: socketActivate), "needs systemd-socket-activate"))
    func realSocketActivate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/homed.sock"
        let activator = try BackgroundProcess(
            [socketActivate, "-l", path, "--fdname=homed", probeExecutable, "listen"], outputIn: directory.path)
        // It starts the service at the first connection, as systemd does.
        let client = try connectWhenListening(path, while: activator)
        defer { close(client) }
        let result = activator.finish()
        #expect(result.stdout == "fd=3 name=homed path=\(path) environment=cleared\n")
        #expect(result.status == 0)
    }
}

/// Where Debian's systemd package puts it.
let socketActivate = "/usr/bin/systemd-socket-activate"

/// A connection to `path`, tried until the socket exists (while `process` runs, for at most `patience` s).
private func connectWhenListening(_ path: String, while process: BackgroundProcess) throws -> Int32 {
    let deadline = Date().addingTimeInterval(patience)
    while process.isRunning && Date() < deadline {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected == 0 { return fd }
        close(fd)
        usleep(10_000)
    }
    throw ProbeError("systemd-socket-activate did not listen on \(path)")
}
