/// The socket path daemon and clients agree on when not told otherwise:
/// `HOMED_SOCKET`, else `$XDG_RUNTIME_DIR/homed/homed.sock`, else
/// `/run/homed/homed.sock` for root, else `/tmp/homed-$UID/homed.sock`.
///
/// - Parameters:
///   - environment: the process environment.
///   - uid: the process's user id.
package func defaultSocketPath(environment: [String: String], uid: UInt32) -> String {
    if let explicit = environment["HOMED_SOCKET"], !explicit.isEmpty { return explicit }
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/homed/homed.sock" }
    if uid == 0 { return "/run/homed/homed.sock" }
    return "/tmp/homed-\(uid)/homed.sock"
}
