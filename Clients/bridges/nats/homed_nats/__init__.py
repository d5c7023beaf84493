"""homed-nats: homed's journal on NATS JetStream (README.md).

- `layout`: subjects, stream and bucket names, headers, records and KV entries —
  values only, no I/O (tested without a server);
- `config`: settings from an INI file and flags, credentials from files;
- `bridge`: the service (homed's resuming subscription → the stream and the
  bucket; remote writes by request/reply);
- `calls`: homed's unary calls by request/reply, at the home (the bridge serves them);
- `remote`: a remote reader (snapshot, then the stream with no gap and no
  duplicate) and a remote writer, for other machines;
- `remote_socket`, `follow`, `cli`: homed-nats-remote, homed's own protocol on a
  local socket carried over NATS (Subscribe from the stream and the bucket).
"""

__version__ = "0.2.0"
