// CBenchPeers: minimal C clients of a running homed, for homed-bench. They take
// frames the caller encoded (CBenchFloor knows nothing of the schema, except
// cbf_subscribers, which decodes stream messages with the protoc-c code), so the
// daemon is measured with the same client code as the floor: the difference
// between these figures and the floor's is the daemon's own cost.
//
// Return values as in CBenchFloor.h: 0 or a negative errno.
#ifndef CBENCHPEERS_H
#define CBENCHPEERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// CLOCK_MONOTONIC in nanoseconds: the clock every latency here is taken with.
int64_t cbf_now_ns(void);

/// Round trips to a server listening on `socket_path`: connects, writes `setup`
/// (e.g. a hello frame) and reads `setup_replies` frames; then writes `request`
/// and reads `replies_per_request` whole frames, 1000 unrecorded times, then
/// `iterations` recorded times into `out_latencies_ns`.
int cbf_client_round_trips(const char *socket_path, const uint8_t *setup, size_t setup_len, int setup_replies,
                           const uint8_t *request, size_t request_len, int replies_per_request, int iterations,
                           double *out_latencies_ns);

/// Unary calls to a server on `socket_path`, pipelined: after `setup` (as above),
/// writes `calls` requests, cycling through the `request_kinds` pre-encoded frames
/// of `requests` (distinct call ids), with at most `in_flight` unanswered, and
/// reads `replies_per_call` frames per call without decoding them.
int cbf_pipelined_calls(const char *socket_path, const uint8_t *setup, size_t setup_len, int setup_replies,
                        const uint8_t *const *requests, const size_t *request_lens, int request_kinds, long calls,
                        int replies_per_call, int in_flight);

/// Subscribers of a running homed, each a thread with a blocking socket.
typedef struct cbf_subscribers cbf_subscribers;

/// Connects `count` subscribers to `socket_path`; each writes `setup` (a hello and
/// a Subscribe open frame on call 1), then reads stream messages, recording for
/// every value event its sequence number and the CLOCK_MONOTONIC time its frame
/// was parsed, until it has `expected` events (delivered + merged) or the stream
/// ends. Returns NULL (and *error) when a connection fails.
cbf_subscribers *cbf_subscribers_start(const char *socket_path, int count, const uint8_t *setup, size_t setup_len,
                                       long expected, int *error);
/// How many subscribers have seen their SUBSCRIBED marker.
int cbf_subscribers_ready(const cbf_subscribers *subscribers);
/// Waits up to `timeout_ms` for every subscriber to finish, then shuts down the
/// sockets of those that did not and joins all threads. Returns the first error a
/// subscriber met (or -ETIMEDOUT when one had to be cut off), else 0.
int cbf_subscribers_join(cbf_subscribers *subscribers, int timeout_ms);
/// Subscriber `index`'s records after join: the number, and the arrays.
long cbf_subscribers_records(const cbf_subscribers *subscribers, int index, const uint64_t **seqs,
                             const int64_t **times_ns);
/// Events merged and gap or resync markers seen, over all subscribers.
long cbf_subscribers_merged(const cbf_subscribers *subscribers);
long cbf_subscribers_markers(const cbf_subscribers *subscribers);
void cbf_subscribers_free(cbf_subscribers *subscribers);

#ifdef __cplusplus
}
#endif
#endif
