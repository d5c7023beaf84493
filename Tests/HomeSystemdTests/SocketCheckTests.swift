import Foundation
import HomeModel
import Testing

@testable import HomeSystemd

/// The check every passed socket goes through, on descriptors of this process.
@Suite("socket activation: what a descriptor is")
struct SocketCheckTests {
    @Test("a listening Unix stream socket passes, and its bound path is read back")
    func listening() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/homed.sock"
        let listener = try unixSocket(SOCK_STREAM, at: path, listening: true)
        defer { close(listener) }
        #expect(try SystemdSockets.checkListeningUnixStream(fd: listener) == path)
    }

    @Test("anything else is refused with the descriptor's number and what it is")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        let udp = try udpSocket()
        let file = open(directory.path + "/file", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in [udp, file] + ends { close(fd) } }
        let cases: [(Int32, String)] = [
            (udp, "a UDP socket (IPv4)"), (file, "a regular file"), (ends[0], "a pipe"),
        ]
        for (fd, what) in cases {
            #expect(
                throws: HomeError(
                    .failedPrecondition, "fd \(fd) from systemd is not a listening Unix stream socket (it is \(what))")
            ) {
                try SystemdSockets.checkListeningUnixStream(fd: fd)
            }
        }
        #expect(
            throws: HomeError(
                .failedPrecondition,
                "fd \(Int32.max) from systemd is not a listening Unix stream socket (it is not open)")
        ) {
            try SystemdSockets.checkListeningUnixStream(fd: .max)
        }
    }

    @Test("no sockets passed is no socket; a failure of sd_listen_fds is a clear error")
    func counts() throws {
        #expect(try SystemdSockets.adopt(count: 0, names: []) == nil)
        #expect(
            throws: HomeError(
                .failedPrecondition, "the sockets systemd passed (LISTEN_FDS) cannot be taken: Bad file descriptor")
        ) {
            try SystemdSockets.adopt(count: -EBADF, names: [])
        }
    }
}
