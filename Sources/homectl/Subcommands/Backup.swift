internal import ArgumentParser
internal import HomeClient
internal import HomeModel
internal import HomeWire

#if canImport(Glibc)
    internal import Glibc
#endif

/// `homectl backup FILE`: a consistent copy of the running daemon's database.
///
/// The daemon takes the copy (SQLite's online backup, in small steps) and sends its
/// bytes; homectl writes FILE itself, as the user who asked. The daemon runs as its
/// own user in a sandbox (a private /tmp, no home directories), so a path it wrote
/// would often not be where the user looks.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the running daemon's database into FILE.",
        discussion: """
            The copy is consistent (every change up to the seq it names, taken while homed \
            runs: writers wait for one small step of it at most) and opens with \
            homed --db FILE. FILE is written beside itself under a temporary name and \
            renamed into place once complete, mode 0600; an existing FILE is replaced. \
            Needs the admin role. Exit codes: 73 when FILE cannot be written, 9 when the \
            daemon keeps its home in memory, 7 without the admin role. For a very large \
            database give --timeout 0 (or more seconds).
            """)

    @OptionGroup var options: ConnectionOptions

    @Argument(help: "The file to write.", completion: .file())
    var file: String

    /// sysexits' EX_CANTCREAT: the output file cannot be created.
    static let cannotCreateExitCode: Int32 = 73

    func run() async throws {
        // FILE's directory first: a path homectl cannot write is refused before the
        // daemon copies anything.
        let partial: PartialFile
        do throws(PartialFile.Failure) {
            partial = try PartialFile(beside: file)
        } catch {
            Output.error("homectl: cannot write the backup to \(file): \(error.reason)")
            throw ExitCode(Self.cannotCreateExitCode)
        }
        let received: (bytes: UInt64, seq: UInt64)
        do {
            received = try await options.withClient { client throws(HomeError) in
                try await Self.receive(client.backup(), into: partial)
            }
            try partial.commit()
        } catch let error as PartialFile.Failure {
            partial.discard()
            Output.error("homectl: cannot write the backup to \(file): \(error.reason)")
            throw ExitCode(Self.cannotCreateExitCode)
        } catch let failure as Failure where failure.error.cause is PartialFile.Failure {
            // Writing failed while the chunks came (a full disk): the file's fault, not the daemon's.
            partial.discard()
            Output.error("homectl: cannot write the backup to \(file): \(failure.error.message)")
            throw ExitCode(Self.cannotCreateExitCode)
        } catch {
            partial.discard()
            throw error
        }
        if options.json {
            Output.structured(
                JSON.object([
                    ("path", .string(file)), ("bytes", .uint(received.bytes)), ("seq", .uint(received.seq)),
                ]), options)
        } else {
            Output.line("Backed up \(received.bytes) bytes to \(file) (every change up to seq \(received.seq))")
        }
    }

    /// Appends every chunk to the file, checking they follow each other.
    private static func receive(_ chunks: BackupChunks, into partial: PartialFile) async throws(HomeError) -> (
        bytes: UInt64, seq: UInt64
    ) {
        var received: UInt64 = 0
        var total: UInt64 = 0
        var seq: UInt64 = 0
        do {
            for try await chunk in chunks {
                guard chunk.offset == received else {
                    throw HomeError(
                        .dataLoss, "the backup's chunk at byte \(chunk.offset) came where byte \(received) was due")
                }
                try partial.write(chunk.data)
                received += UInt64(chunk.data.count)
                total = chunk.totalBytes
                seq = chunk.seq
            }
        } catch let error as HomeError {
            throw error
        } catch let error as PartialFile.Failure {
            throw HomeError(.cancelled, error.reason, cause: error)
        } catch {
            throw HomeError(.internal, "the backup could not be received: \(error)")
        }
        guard total > 0, received == total else {
            throw HomeError(.dataLoss, "the backup ended after \(received) of its \(total) bytes")
        }
        return (received, seq)
    }
}
