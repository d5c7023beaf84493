#if canImport(Glibc)
    package import Glibc
#endif

/// A program started with posix_spawn: stdin from /dev/null, stdout and stderr to
/// the descriptors given, every other descriptor closed in the child, in the
/// working directory given. What the daemon runs a trigger's command with, and
/// the integration tests their children.
///
/// Not Foundation's `Process`: on this toolchain its `run()` now and then
/// over-reads `/proc/self/fd` and crashes the process that called it (SIGSEGV in
/// `findMaximumOpenFromProcSelfFD`), which for the daemon would be every client's
/// connection lost because a trigger ran a command.
package final class SpawnedProcess: Sendable {
    package let processIdentifier: pid_t
    /// The wait status once reaped.
    private let ended = Locked<Int32?>(nil)

    /// Why a program could not start: glibc's posix_spawn reports a failed exec
    /// too (a missing program, one not executable), as its errno.
    package struct StartFailure: Error, CustomStringConvertible {
        package let program: String
        /// strerror's sentence: "No such file or directory".
        package let reason: String
        package var description: String { "could not start \(program): \(reason)" }
    }

    package init(
        _ program: String, _ arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32,
        workingDirectory: String? = nil
    ) throws(StartFailure) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        _ = spawnActionsCloseFrom(&actions, 3)
        if let workingDirectory { _ = spawnActionsChangeDirectory(&actions, workingDirectory) }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard status == 0 else {
            throw StartFailure(program: program, reason: String(cString: strerror(status)))
        }
        processIdentifier = pid
    }

    /// Reaps the child if it has ended (`block`: waits for it).
    private func reap(block: Bool) -> Int32? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(processIdentifier, &status, block ? 0 : WNOHANG)
            } while result < 0 && errno == EINTR
            if result == processIdentifier { ended = status }
            return ended
        }
    }

    package var isRunning: Bool { reap(block: false) == nil }

    /// Blocks the calling thread until the child ends.
    package func waitUntilExit() { _ = reap(block: true) }

    /// The signal that ended it, if one did.
    package var terminatingSignal: Int32? {
        let signal = (reap(block: false) ?? 0) & 0x7f
        return signal == 0 ? nil : signal
    }

    /// Its exit code, or the signal that killed it (as Foundation's `Process` gives them).
    package var terminationStatus: Int32 {
        terminatingSignal ?? ((reap(block: false) ?? 0) >> 8) & 0xff
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which
/// Swift's Glibc module does not show: it closes every descriptor from `from` up in
/// the child, so nothing the parent holds open (a socket, a database, a pipe)
/// leaks into it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnActionsCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32)
    -> Int32

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), likewise not shown.
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func spawnActionsChangeDirectory(
    _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>
) -> Int32
