internal import Foundation
internal import HomeModel
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Runs the programs triggers name (HomeKit has no such action; Home Assistant's
/// shell commands are the model): one process per firing, never through a shell,
/// with an environment describing the firing, stdin empty, in /, stopped after its
/// timeout, at most `maxRunning` at once (a firing beyond that is noted, not
/// queued, so a trigger storm cannot become a process storm).
///
/// It runs as the daemon's own user, which the system service makes an
/// unprivileged one; a daemon running as root runs commands as nobody, through
/// util-linux's setpriv, because posix_spawn cannot change the user of the child
/// it spawns. Started by posix_spawn (`SpawnedProcess`), not Foundation's Process.
final class CommandRunner: Sendable {
    /// What a run came to: a sentence for the history.
    typealias Completion = @Sendable (String) -> Void

    let maxRunning: Int
    /// How much of a command's output the history keeps.
    static let outputLimit = 2048
    private let running = Mutex(0)

    init(maxRunning: Int = 8) {
        self.maxRunning = maxRunning
    }

    /// Refuses a program that does not exist, is not a regular file, or that the
    /// daemon's user may not execute, naming it.
    static func checkExecutable(_ program: String) throws(HomeError) {
        // A relative path is the model's to refuse, with its own message.
        guard program.hasPrefix("/") else { return }
        var info = stat()
        guard stat(program, &info) == 0 else {
            throw HomeError(.invalidArgument, "the command \(program) does not exist")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw HomeError(.invalidArgument, "the command \(program) is not a file")
        }
        guard access(program, X_OK) == 0 else {
            throw HomeError(.invalidArgument, "the command \(program) is not executable by homed's user")
        }
    }

    /// Starts `command`; `completion` gets how it ended ("exited 0 after 12 ms;
    /// output: …", "killed after its timeout of 30000 ms", "could not start: …").
    func run(_ command: TriggerCommand, environment: [String: String], completion: @escaping Completion) {
        let started = running.withLock { count in
            guard count < maxRunning else { return false }
            count += 1
            return true
        }
        guard started else {
            completion("not run: \(maxRunning) commands are running already")
            return
        }
        Task.detached { [self] in
            let outcome = await Self.execute(command, environment: environment)
            running.withLock { $0 -= 1 }
            completion(outcome)
        }
    }

    private static func execute(_ command: TriggerCommand, environment: [String: String]) async -> String {
        let (program, arguments) =
            geteuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", command.program])
            : (command.program, [])
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            return "could not start: no pipe for its output: \(String(cString: strerror(errno)))"
        }
        // Both ends close on exec: the child gets the write end as its stdout and stderr only.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let reader = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        let startMs = Int64(Date().timeIntervalSince1970 * 1000)
        let process: SpawnedProcess
        do throws(SpawnedProcess.StartFailure) {
            process = try SpawnedProcess(
                program, arguments + command.arguments, environment: environment, stdout: ends[1], stderr: ends[1],
                workingDirectory: "/")
        } catch {
            close(ends[1])
            return "could not start: \(error.reason)"
        }
        close(ends[1])
        let output = OutputBuffer()
        reader.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                output.finish()
            } else {
                output.append(data)
            }
        }
        let timedOut = Mutex(false)
        let pid = process.processIdentifier
        let stopper = Task {
            try await Task.sleep(for: .milliseconds(command.timeoutMs))
            timedOut.withLock { $0 = true }
            kill(pid, SIGTERM)
            try await Task.sleep(for: .seconds(1))
            kill(pid, SIGKILL)
        }
        // waitpid blocks: on a thread of its own, not one of the concurrency pool's.
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                ended.resume()
            }
        }
        stopper.cancel()
        // The rest of its output, unless something it started still holds the pipe.
        await output.waitForEnd(upToMs: 200)
        reader.readabilityHandler = nil
        let elapsed = Int64(Date().timeIntervalSince1970 * 1000) - startMs
        var text: String
        if timedOut.withLock({ $0 }) {
            text = "killed after its timeout of \(command.timeoutMs) ms"
        } else if let signal = process.terminatingSignal {
            text = "killed by signal \(signal) after \(elapsed) ms"
        } else {
            text = "exited \(process.terminationStatus) after \(elapsed) ms"
        }
        let shown = output.text
        if !shown.isEmpty { text += "; output: \(shown)" }
        return text
    }
}

/// A command's output as it arrives, up to the history's limit.
private final class OutputBuffer: Sendable {
    private struct State {
        var data = Data()
        var truncated = false
        var ended = false
    }

    private let state = Mutex(State())

    func append(_ data: Data) {
        state.withLock { state in
            let room = CommandRunner.outputLimit - state.data.count
            if data.count > room { state.truncated = true }
            if room > 0 { state.data.append(data.prefix(room)) }
        }
    }

    func finish() { state.withLock { $0.ended = true } }

    func waitForEnd(upToMs limit: Int) async {
        for _ in 0..<(limit / 10) where !state.withLock({ $0.ended }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The output as text, trailing newlines trimmed, "…" when cut.
    var text: String {
        state.withLock { state in
            var text = String(decoding: state.data, as: UTF8.self)
            while text.hasSuffix("\n") { text.removeLast() }
            return state.truncated ? text + "…" : text
        }
    }
}
