internal import HomeModel
internal import HomeSystemd

#if canImport(Glibc)
    internal import Glibc
#endif

// What HomeSystemd makes of the socket a service manager passed this process: one line
// on stdout ("fd=3 name=homed path=/run/homed/homed.sock environment=cleared", or "not
// activated"), or the error on stderr and exit status 1. HomeSystemdTests start it with
// sockets at fd 3 as systemd does, and under the real systemd-socket-activate.
do {
    if let socket = try SystemdSockets.listenFDs() {
        let cleared = getenv("LISTEN_FDS") == nil && getenv("LISTEN_PID") == nil && getenv("LISTEN_FDNAMES") == nil
        print(
            "fd=\(socket.fd) name=\(socket.name ?? "-") path=\(socket.path ?? "-") "
                + "environment=\(cleared ? "cleared" : "kept")")
    } else {
        print("not activated")
    }
} catch {
    let line = "systemd-probe: \(error.message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}
