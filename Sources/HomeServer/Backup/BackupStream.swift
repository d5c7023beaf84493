internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore
internal import NIOPosix

#if canImport(Glibc)
    internal import Glibc
#endif

/// A Backup call: the database copied on a thread of the pool (never on an event
/// loop: the copy reads the whole file), then sent to the client as its bytes.
///
/// The daemon streams the copy rather than writing it where the client says: the
/// daemon runs as its own user, sandboxed (a private /tmp, home directories out of
/// reach), so a path it wrote would often not be where the user looks, or not
/// writable by it at all; homectl writes the file itself, as the user who asked.
///
/// Event loop only (its connection's), but for the copy itself. The copy is
/// unlinked as soon as it is opened, so a daemon that dies mid-stream leaves
/// nothing behind; chunks are read from the open file while the socket takes them.
final class BackupStream {
    private let writer: any StreamCallWriter
    private let onEnd: () -> Void
    private var file: Int32 = -1
    private var offset: UInt64 = 0
    private var total: UInt64 = 0
    private var seq: UInt64 = 0
    private var ended = false

    /// The largest chunk: well under the smallest frame a connection may negotiate.
    static let chunkBytes = 60 * 1024

    init(writer: any StreamCallWriter, onEnd: @escaping () -> Void) {
        self.writer = writer
        self.onEnd = onEnd
    }

    /// Starts the copy on the thread pool; the stream sends it once it is made.
    func start(store: HomeStore) {
        let loopBound = NIOLoopBound(self, eventLoop: writer.eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: writer.eventLoop) { () throws -> BackupCopy in
            let (path, seq) = try store.backupToTemporaryFile()
            return try BackupCopy(path: path, seq: seq)
        }.whenComplete { result in
            let stream = loopBound.value
            switch result {
            case .success(let copy):
                guard !stream.ended else {
                    close(copy.file)
                    return
                }
                stream.file = copy.file
                stream.total = copy.size
                stream.seq = copy.seq
                stream.pump()
            case .failure(let error):
                stream.finish(with: error as? HomeError ?? HomeError(.internal, "the backup failed: \(error)"))
            }
        }
    }

    /// Sends chunks while the socket takes them; ends the call after the last.
    private func pump() {
        guard !ended, file >= 0 else { return }
        var wrote = false
        while writer.isWritable && !ended {
            let wanted = Int(min(UInt64(Self.chunkBytes), total - offset))
            var data = [UInt8](repeating: 0, count: wanted)
            let count =
                wanted == 0 ? 0 : data.withUnsafeMutableBytes { pread(file, $0.baseAddress, wanted, off_t(offset)) }
            guard count == wanted else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "it ended early"
                finish(with: HomeError(.internal, "the backup copy could not be read at byte \(offset): \(reason)"))
                return
            }
            var payload = writer.allocator.buffer(capacity: wanted + 32)
            BackupChunk(data: data, offset: offset, totalBytes: total, seq: seq).encode(into: &payload)
            do throws(HomeError) {
                try writer.write(payload)
            } catch {
                finish(with: error)
                return
            }
            wrote = true
            offset += UInt64(wanted)
            if offset >= total {
                finish(with: nil)
                return
            }
        }
        if wrote { writer.flush() }
    }

    private func release() {
        ended = true
        if file >= 0 {
            close(file)
            file = -1
        }
    }
}

extension BackupStream: ServerStreamCall {
    func cancel() {
        release()
    }

    func finish(with error: HomeError?) {
        guard !ended else { return }
        release()
        writer.finish(with: error)
        onEnd()
    }

    func resumeWriting() {
        pump()
    }
}

/// A finished copy, open for reading and already unlinked.
private struct BackupCopy: Sendable {
    let file: Int32
    let size: UInt64
    let seq: UInt64

    init(path: String, seq: UInt64) throws(HomeError) {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        let reason = String(cString: strerror(errno))
        unlink(path)
        guard file >= 0 else { throw HomeError(.internal, "the backup copy \(path) could not be opened: \(reason)") }
        var status = stat()
        guard fstat(file, &status) == 0 else {
            close(file)
            throw HomeError(.internal, "the backup copy \(path) could not be measured")
        }
        self.file = file
        self.size = UInt64(status.st_size)
        self.seq = seq
    }
}
