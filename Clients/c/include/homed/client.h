/*
 * libhomed-client: a blocking C client for homed.
 *
 * homed serves its home model over a Unix stream socket: length-prefixed
 * protobuf frames (Protos/home_v1.proto), unary calls and server-streaming
 * calls multiplexed on one connection. The wire is described in
 * docs/protocol.md; this library is one implementation of it, built on
 * protobuf-c and the code protoc-c generates from the same schema
 * (home_v1.pb-c.h, installed beside this header).
 *
 * The API is blocking and single-threaded: a homed_client and its streams
 * belong to one thread at a time. Every blocking function takes a wait in
 * milliseconds (HOMED_NO_TIMEOUT to wait as long as it takes). While it waits,
 * the library reads every frame that arrives: it answers the daemon's pings,
 * records a go-away, and queues the messages of the other open calls for their
 * own homed_stream_next. A connection with open streams must be read at least
 * every 20 seconds (homed_stream_next or homed_process), or the daemon closes
 * it for not answering its ping.
 *
 * Errors: every function that can fail returns a status code (0 is OK;
 * otherwise one of gRPC's canonical codes, HOME__V1__STATUS_CODE__*) and, when
 * `status` is not NULL, fills it with the code and a message for people. A
 * call that the daemon ended with an error returns the daemon's code and
 * message as they came. Errors of the connection itself (the daemon went away,
 * sent a frame that does not decode or is over the agreed size) end every
 * open call with that error; the client is then unusable: close it and
 * connect again (homed_cursor resumes a subscription without a gap).
 */
#ifndef HOMED_CLIENT_H
#define HOMED_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "home_v1.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The wire protocol version this library speaks (Hello.protocol_version). */
#define HOMED_PROTOCOL_VERSION 1
/* A wait or deadline that never ends. */
#define HOMED_NO_TIMEOUT (-1)
/* The frame size assumed before the hello reply says otherwise (4 MiB). */
#define HOMED_DEFAULT_MAX_FRAME_SIZE (4u * 1024u * 1024u)

/* The outcome of a call: a canonical status code (0 = OK) and what went wrong. */
typedef struct homed_status {
    int code;
    char message[1024];
} homed_status;

/* Options of homed_connect; a zeroed struct (or NULL) gives the defaults. */
typedef struct homed_options {
    /* Shown by the daemon as the connection's client (GetStats) and as the
     * origin name of this connection's changes. NULL: "libhomed-client". */
    const char *client_name;
    /* How long connecting and the hello may take, in ms. 0: 10 000. */
    int timeout_ms;
    /* The largest frame this client accepts; 0: the daemon's limit. The daemon
     * never goes below 65 536 bytes. */
    uint32_t max_frame_size;
    /* The protocol version the hello announces; 0: HOMED_PROTOCOL_VERSION.
     * (Another value is for testing the daemon's refusal.) */
    uint32_t protocol_version;
} homed_options;

typedef struct homed_client homed_client;
typedef struct homed_stream homed_stream;

/* The socket homed listens on by default: $HOMED_SOCKET, else
 * $XDG_RUNTIME_DIR/homed/homed.sock, else /run/homed/homed.sock as root, else
 * /tmp/homed-$UID/homed.sock. Written to `buffer`; NULL if it does not fit.
 * `source`, when not NULL, is set to where the path came from ("HOMED_SOCKET",
 * "XDG_RUNTIME_DIR", "the default for root", "the default for this user"). */
const char *homed_default_socket_path(char *buffer, size_t size, const char **source);

/* "NOT_FOUND" for 5; "UNKNOWN_STATUS" for a code the schema does not define. */
const char *homed_status_name(int code);

/* Connects to `path` (NULL: homed_default_socket_path) and says hello. On
 * success *client is the connection (close it with homed_close). Fails with
 * UNAVAILABLE when no daemon listens there (the message says which path, where
 * it came from and how to start homed), with the daemon's status when it
 * refuses the hello (FAILED_PRECONDITION for a protocol version it does not
 * speak), with DEADLINE_EXCEEDED when nothing answers within the timeout, and
 * with INTERNAL when the program listening there does not speak homed's
 * protocol. */
int homed_connect(const char *path, const homed_options *options, homed_client **client, homed_status *status);

/* Closes the connection and frees the client. Streams still open end with
 * UNAVAILABLE; they stay valid until homed_stream_free. NULL is ignored. */
void homed_close(homed_client *client);

/* The daemon's hello reply: connection id, journal id, frame size, capabilities. */
const Home__V1__HelloReply *homed_hello_reply(const homed_client *client);
/* The go-away the daemon sent when it began shutting down, else NULL. */
const Home__V1__GoAway *homed_go_away(const homed_client *client);
/* The socket, to poll for readability before homed_process. */
int homed_fd(const homed_client *client);

/* A unary call. `method` is "GetHome" or "home.v1.HomeService/GetHome";
 * `request` a message of the method's request type (NULL: an empty request).
 * On OK, *response is the decoded response of type `response_type` (free it
 * with protobuf_c_message_free_unpacked(*response, NULL)); on an error it is
 * NULL. `timeout_ms` is sent as the call's deadline (HOMED_NO_TIMEOUT: none),
 * and the local wait gives up one second after it. */
int homed_call(homed_client *client, const char *method, const ProtobufCMessage *request,
               const ProtobufCMessageDescriptor *response_type, int timeout_ms, ProtobufCMessage **response,
               homed_status *status);

/* Opens a server-streaming call (Subscribe, OpenProvider) whose messages are of
 * type `message_type`. It returns once the open frame is sent; a refusal comes
 * as the stream's end from homed_stream_next. `timeout_ms` is how long the
 * stream may live (HOMED_NO_TIMEOUT: until it is cancelled). */
int homed_stream_open(homed_client *client, const char *method, const ProtobufCMessage *request,
                      const ProtobufCMessageDescriptor *message_type, int timeout_ms, homed_stream **stream,
                      homed_status *status);

/* homed_stream_open for Subscribe: messages are Home__V1__SubscribeResponse. */
int homed_subscribe(homed_client *client, const Home__V1__SubscribeRequest *request, homed_stream **stream,
                    homed_status *status);

/* The stream's next message, waiting at most `wait_ms` (HOMED_NO_TIMEOUT: as
 * long as it takes).
 *   - OK with *message set: a message (free it with
 *     protobuf_c_message_free_unpacked).
 *   - OK with *message NULL: the stream has ended with OK, or with CANCELLED
 *     after homed_stream_cancel.
 *   - DEADLINE_EXCEEDED with homed_stream_ended() false: nothing came in
 *     time; the stream is still open.
 *   - any other code: the stream has ended with it (the daemon's status, or
 *     the connection's error). Messages that came before the end are
 *     returned first. */
int homed_stream_next(homed_stream *stream, int wait_ms, ProtobufCMessage **message, homed_status *status);

/* Asks the daemon to end the stream; homed_stream_next then returns the
 * messages already on their way and ends with OK and no message. */
int homed_stream_cancel(homed_stream *stream, homed_status *status);

/* Whether the stream's end (its status) has been received. */
bool homed_stream_ended(const homed_stream *stream);
/* The stream's call id on the wire. */
uint64_t homed_stream_call_id(const homed_stream *stream);

/* Frees the stream; one still open is cancelled first (its remaining frames
 * are dropped as they arrive). NULL is ignored. */
void homed_stream_free(homed_stream *stream);

/* Reads and handles whatever frames arrive within `wait_ms` (0: only what is
 * there now): answers pings and queues stream messages. For clients that poll
 * homed_fd themselves. */
int homed_process(homed_client *client, int wait_ms, homed_status *status);

/* Pings the daemon and waits for the pong: a round trip. */
int homed_ping(homed_client *client, int timeout_ms, homed_status *status);

/*
 * Where a subscription stands, to resume it after a disconnect with exactly
 * what was missed (the rule of docs/notifications.md, "Resuming a stream"): feed
 * it every SubscribeResponse and use only the events it marks fresh; to
 * resume, set the new SubscribeRequest with homed_cursor_resume.
 */
typedef struct homed_cursor homed_cursor;

homed_cursor *homed_cursor_new(void);
void homed_cursor_free(homed_cursor *cursor);

/* Takes in one stream message. fresh[i] (an array of message->n_events
 * entries; may be NULL when there are none) is set to 1 for each event not
 * delivered before and 0 for a repeat. Returns how many are fresh; 0 with
 * errno ENOMEM when memory ran out (the cursor is then unchanged). */
size_t homed_cursor_accept(homed_cursor *cursor, const Home__V1__SubscribeResponse *message, unsigned char *fresh);

/* Whether the cursor has a resume point (it has seen a marker or an event). */
bool homed_cursor_has_resume_point(const homed_cursor *cursor);
/* The sequence number a resume starts after, and the journal it belongs to. */
uint64_t homed_cursor_resume_seq(const homed_cursor *cursor);
const char *homed_cursor_journal_id(const homed_cursor *cursor);

/* Sets `request` to resume where the cursor stands: since_seq, journal_id
 * (pointing into the cursor: keep the cursor alive while the request is used)
 * and no snapshot. Does nothing without a resume point. */
void homed_cursor_resume(const homed_cursor *cursor, Home__V1__SubscribeRequest *request);

#ifdef __cplusplus
}
#endif

#endif /* HOMED_CLIENT_H */
