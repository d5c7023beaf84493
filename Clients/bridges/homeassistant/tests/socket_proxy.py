"""A Unix socket proxy between a client and homed that a test can cut: every
connection through it closed at once, new ones refused until restored (a dropped
connection to a homed that lives on, which the client must resume from)."""

import os
import socket
import threading


class SocketProxy:
    def __init__(self, path, target):
        self.path, self.target = path, target
        self.lock = threading.Lock()
        self.open = []  # sockets of the connections through it
        self.refusing = False
        self.connections = 0
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)
        self.server.bind(path)
        self.server.listen(16)
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed
            with self.lock:
                if self.refusing:
                    client.close()
                    continue
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    upstream.connect(self.target)
                except OSError:
                    client.close()
                    continue
                self.open += [client, upstream]
                self.connections += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        """Closes every connection through the proxy and refuses new ones."""
        with self.lock:
            self.refusing = True
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.open = []

    def restore(self):
        with self.lock:
            self.refusing = False

    def close(self):
        self.cut()
        self.server.close()
