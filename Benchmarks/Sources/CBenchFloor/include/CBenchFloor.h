// CBenchFloor: what this machine's kernel can do over a Unix stream socket, with
// the same framing as homed (a 4-byte big-endian length, then the frame), measured
// by minimal C code. homed-bench prints the daemon's figures as ratios to these.
//
// Every function creates its own listening socket in `socket_dir` (a fresh name,
// removed afterwards), runs its peer(s) on threads of its own, joins them before
// returning, and returns 0 or a negative errno (-EINVAL for bad arguments,
// -ENAMETOOLONG when the socket path does not fit in sun_path, -EPROTO when a
// peer saw a malformed stream). Plain C11 + pthreads. The only global state is an
// atomic counter for socket names, so calls may run concurrently, even in the same
// directory (though concurrent measurements disturb each other).
#ifndef CBENCHFLOOR_H
#define CBENCHFLOOR_H

// Minimal C clients of a running homed (the daemon measured with the floor's client code).
#include "CBenchPeers.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Round trips of one length-prefixed message: the client (calling thread) sends a
/// 4-byte big-endian length and `message_size` bytes; a server thread reads the
/// whole frame, parsing the prefix, and writes it back; the client reads the whole
/// echo. 1000 unrecorded warm-up round trips come first; then round trip `i` takes
/// `out_latencies_ns[i]` nanoseconds (CLOCK_MONOTONIC), for `i < iterations`.
int cbf_pingpong(const char *socket_dir, int iterations, int message_size,
                 double *out_latencies_ns);

/// Stream read throughput: a writer thread writes `frames` frames of `frame_size`
/// payload bytes each (plus the 4-byte prefix), `batch` frames per write(); the
/// reader (calling thread) reads with a 64 KiB buffer and parses every length
/// prefix, as a real client must. `*out_frames_per_sec` receives frames divided by
/// the time from the reader's connect to its last frame.
int cbf_stream_reader(const char *socket_dir, long frames, int frame_size, int batch,
                      double *out_frames_per_sec);

/// The number of latencies cbf_fanout can record: `subscribers` times the number of
/// changes it publishes, `(long)changes_per_sec * duration_ms / 1000` (at least 1).
/// `out_latencies_ns` must have room for this many doubles.
long cbf_fanout_capacity(int subscribers, int changes_per_sec, int duration_ms);

/// Fan-out delivery latency: `subscribers` connections, each read by a thread of
/// its own; the calling thread publishes `(long)changes_per_sec * duration_ms / 1000`
/// changes (at least 1) paced at `changes_per_sec`, writing each change as one frame of
/// `frame_size` payload bytes (>= 16: the CLOCK_MONOTONIC publication time in ns
/// and the change's sequence number, native byte order) to every subscriber in turn
/// with blocking writes. Every subscriber records now - publication time for every
/// frame it parses. `out_latencies_ns` (room for cbf_fanout_capacity(...) doubles)
/// receives them grouped by subscriber, in arrival order; `*out_count` the number
/// recorded (the capacity, when nothing was lost).
int cbf_fanout(const char *socket_dir, int subscribers, int changes_per_sec, int duration_ms,
               int frame_size, double *out_latencies_ns, long *out_count);

#ifdef __cplusplus
}
#endif

#endif
