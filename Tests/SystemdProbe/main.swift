internal import HomeModel
internal import HomeSystemd
internal import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

// HomeSystemd in a process of its own, started by HomeSystemdTests with the
// environment and descriptors systemd gives a service (the tests' own process
// environment and fd 3 are not theirs to change):
//
//   systemd-probe listen     what SystemdSockets.listenFDs() makes of fd 3…: one line,
//                            "fd=3 name=homed path=/run/homed/homed.sock environment=cleared"
//                            or "not activated"; or the error on stderr and exit status 1.
//   systemd-probe notify ACTION…   each of ready, ready=STATUS, stopping, reloading,
//                            status=TEXT through SystemdNotifier, in order; one line each:
//                            "sent", "not under systemd" or "failed: …". Its log goes to
//                            stderr as journal lines, from debug up.

func fail(_ message: String) -> Never {
    let line = "systemd-probe: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

func listen() {
    do {
        if let socket = try SystemdSockets.listenFDs() {
            let cleared =
                getenv("LISTEN_FDS") == nil && getenv("LISTEN_PID") == nil && getenv("LISTEN_FDNAMES") == nil
            print(
                "fd=\(socket.fd) name=\(socket.name ?? "-") path=\(socket.path ?? "-") "
                    + "environment=\(cleared ? "cleared" : "kept")")
        } else {
            print("not activated")
        }
    } catch {
        fail(error.message)
    }
}

func notify(_ actions: ArraySlice<String>) {
    LoggingSystem.bootstrap(LogFormat.journal.handlerFactory(level: .debug, environment: [:]))
    let notifier = SystemdNotifier(logger: Logger(label: "systemd-probe"))
    for action in actions {
        let outcome: SystemdNotifier.Outcome
        switch action.split(separator: "=", maxSplits: 1).map(String.init) {
        case ["ready"]: outcome = notifier.ready()
        case let parts where parts.count == 2 && parts[0] == "ready": outcome = notifier.ready(status: parts[1])
        case ["stopping"]: outcome = notifier.stopping()
        case ["reloading"]: outcome = notifier.reloading()
        case let parts where parts.count == 2 && parts[0] == "status": outcome = notifier.status(parts[1])
        default: fail("unknown action \(action)")
        }
        switch outcome {
        case .sent: print("sent")
        case .notUnderSystemd: print("not under systemd")
        case .failed(let message): print("failed: \(message)")
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "listen": listen()
case "notify": notify(arguments.dropFirst())
default: fail("usage: systemd-probe listen | systemd-probe notify ACTION…")
}
