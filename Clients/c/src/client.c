/*
 * The connection: hello, calls multiplexed by call id, pings, go-away, and
 * the end of everything when the connection fails. One thread at a time; a
 * blocking function reads and dispatches every frame that arrives while it
 * waits, so the daemon's pings are answered and other streams' messages are
 * queued for them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "frame_reader.h"
#include "homed/client.h"

#define SERVICE_PREFIX "home.v1.HomeService/"
#define READ_CHUNK 65536
#define DEFAULT_CONNECT_TIMEOUT_MS 10000

typedef struct queued_message {
    struct queued_message *next;
    size_t length;
    uint8_t data[];
} queued_message;

/* One open call, unary or streaming. A freed stream stays in the client's
 * list, detached, until its status arrives: its call id is not free before. */
struct homed_stream {
    homed_client *client; /* NULL once the client is closed */
    homed_stream *next;   /* in the client's list of calls */
    uint64_t call_id;
    char *method;         /* full name, for messages */
    const ProtobufCMessageDescriptor *message_type;
    queued_message *head, *tail;
    bool ended;
    bool cancelled;
    bool detached;
    homed_status end;
};

struct homed_client {
    int fd;
    char *path;
    frame_reader reader;
    uint32_t max_frame_size;
    uint64_t next_call_id;
    uint64_t next_nonce;
    uint64_t awaited_pong;
    bool pong_seen;
    Home__V1__Frame *hello_frame;   /* holds the hello reply */
    Home__V1__Frame *go_away_frame; /* holds the go-away */
    homed_stream *calls;
    /* The status on call 0 the daemon sent last: why it closes, if it does. */
    bool has_reason;
    homed_status reason;
    /* Once the connection has failed: the error every call then gets. */
    bool broken;
    bool broken_by_garbage; /* a frame too large or undecodable */
    homed_status error;
};

/* ---- statuses ---------------------------------------------------------- */

static int set_status(homed_status *status, int code, const char *format, ...) __attribute__((format(printf, 3, 4)));

static int set_status(homed_status *status, int code, const char *format, ...) {
    if (status) {
        status->code = code;
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(status->message, sizeof status->message, format, arguments);
        va_end(arguments);
    }
    return code;
}

static int copy_status(homed_status *status, const homed_status *from) {
    if (status && status != from) *status = *from;
    return from->code;
}

static int ok(homed_status *status) {
    return set_status(status, HOME__V1__STATUS_CODE__OK, "%s", "");
}

/* ---- time -------------------------------------------------------------- */

static int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* -1: no deadline. */
static int64_t deadline_after(int wait_ms) {
    return wait_ms < 0 ? -1 : now_ms() + wait_ms;
}

/* What poll() should wait for a deadline: -1 for none, else what is left. */
static int poll_wait(int64_t deadline) {
    if (deadline < 0) return -1;
    int64_t left = deadline - now_ms();
    if (left <= 0) return 0;
    return left > 1000000 ? 1000000 : (int)left;
}

/* ---- calls ------------------------------------------------------------- */

static void free_messages(homed_stream *call) {
    queued_message *message = call->head;
    while (message) {
        queued_message *next = message->next;
        free(message);
        message = next;
    }
    call->head = call->tail = NULL;
}

static void destroy_call(homed_stream *call) {
    free_messages(call);
    free(call->method);
    free(call);
}

static void unlink_call(homed_client *client, homed_stream *call) {
    for (homed_stream **link = &client->calls; *link; link = &(*link)->next) {
        if (*link == call) {
            *link = call->next;
            call->next = NULL;
            return;
        }
    }
}

static homed_stream *find_call(homed_client *client, uint64_t call_id) {
    for (homed_stream *call = client->calls; call; call = call->next)
        if (call->call_id == call_id) return call;
    return NULL;
}

/* Ends a call with `status`. A detached call has no one left to tell: it goes. */
static void end_call(homed_client *client, homed_stream *call, const homed_status *status) {
    call->ended = true;
    call->end = *status;
    unlink_call(client, call);
    call->client = NULL;
    if (call->detached) destroy_call(call);
}

/* ---- the connection failing ------------------------------------------- */

/* From now on every call gets `error`; the open ones end with it. When the
 * daemon said why on call 0 just before closing, that is the better reason. */
static int break_connection(homed_client *client, bool use_reason, int code, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int break_connection(homed_client *client, bool use_reason, int code, const char *format, ...) {
    if (client->broken) return client->error.code;
    client->broken = true;
    if (use_reason && client->has_reason && client->reason.code != HOME__V1__STATUS_CODE__OK) {
        client->error = client->reason;
    } else {
        client->error.code = code;
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(client->error.message, sizeof client->error.message, format, arguments);
        va_end(arguments);
    }
    if (client->fd >= 0) {
        close(client->fd);
        client->fd = -1;
    }
    while (client->calls) end_call(client, client->calls, &client->error);
    return client->error.code;
}

/* ---- sending ----------------------------------------------------------- */

static int write_all(homed_client *client, const uint8_t *bytes, size_t length, int64_t deadline, homed_status *status) {
    size_t offset = 0;
    while (offset < length) {
        ssize_t written = send(client->fd, bytes + offset, length - offset, MSG_NOSIGNAL);
        if (written > 0) {
            offset += (size_t)written;
            continue;
        }
        if (written < 0 && errno == EINTR) continue;
        if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd descriptor = {.fd = client->fd, .events = POLLOUT};
            int ready = poll(&descriptor, 1, poll_wait(deadline));
            if (ready < 0 && errno != EINTR) break;
            if (ready == 0) {
                /* Part of the frame may be out: the connection cannot be used again. */
                break_connection(client, false, HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED,
                                 "homed did not take a frame in time; the connection is closed");
                return copy_status(status, &client->error);
            }
            continue;
        }
        break;
    }
    if (offset < length) {
        break_connection(client, true, HOME__V1__STATUS_CODE__UNAVAILABLE, "writing to homed failed: %s",
                         strerror(errno));
        return copy_status(status, &client->error);
    }
    return ok(status);
}

/* Sends one frame. A frame above the agreed size is refused here, whole. */
static int send_frame(homed_client *client, const Home__V1__Frame *frame, int64_t deadline, homed_status *status) {
    if (client->broken) return copy_status(status, &client->error);
    size_t size = home__v1__frame__get_packed_size(frame);
    if (size > client->max_frame_size)
        return set_status(status, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED,
                          "the frame is %zu bytes; the connection's limit is %u bytes (ask for less, or in pages)",
                          size, client->max_frame_size);
    uint8_t *bytes = malloc(FRAME_HEADER_SIZE + size);
    if (!bytes) return set_status(status, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, "out of memory for a frame of %zu bytes", size);
    frame_header_write(bytes, (uint32_t)size);
    home__v1__frame__pack(frame, bytes + FRAME_HEADER_SIZE);
    int code = write_all(client, bytes, FRAME_HEADER_SIZE + size, deadline, status);
    free(bytes);
    return code;
}

/* ---- receiving --------------------------------------------------------- */

static void answer_ping(homed_client *client, uint64_t nonce) {
    Home__V1__Pong pong = HOME__V1__PONG__INIT;
    pong.nonce = nonce;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_PONG;
    frame.pong = &pong;
    homed_status ignored;
    send_frame(client, &frame, deadline_after(5000), &ignored);
}

static void queue_message(homed_client *client, homed_stream *call, const ProtobufCBinaryData *payload) {
    if (call->detached) return; /* no one will read it */
    queued_message *message = malloc(sizeof *message + payload->len);
    if (!message) {
        break_connection(client, false, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED,
                         "out of memory for a message of %zu bytes on call %llu", payload->len,
                         (unsigned long long)call->call_id);
        return;
    }
    message->next = NULL;
    message->length = payload->len;
    if (payload->len) memcpy(message->data, payload->data, payload->len);
    if (call->tail)
        call->tail->next = message;
    else
        call->head = message;
    call->tail = message;
}

/* Takes one frame body off the wire. Returns false when it broke the connection. */
static bool dispatch(homed_client *client, const uint8_t *body, size_t length) {
    Home__V1__Frame *frame = home__v1__frame__unpack(NULL, length, body);
    if (!frame) {
        client->broken_by_garbage = true;
        break_connection(client, false, HOME__V1__STATUS_CODE__INTERNAL,
                         "homed sent a frame of %zu bytes that does not decode as home.v1.Frame; the connection is closed",
                         length);
        return false;
    }
    bool keep = false;
    if (frame->call_id == 0) {
        switch (frame->kind_case) {
        case HOME__V1__FRAME__KIND_PING:
            answer_ping(client, frame->ping->nonce);
            break;
        case HOME__V1__FRAME__KIND_PONG:
            if (frame->pong->nonce == client->awaited_pong) client->pong_seen = true;
            break;
        case HOME__V1__FRAME__KIND_GO_AWAY:
            if (client->go_away_frame) protobuf_c_message_free_unpacked(&client->go_away_frame->base, NULL);
            client->go_away_frame = frame;
            keep = true;
            break;
        case HOME__V1__FRAME__KIND_STATUS:
            client->has_reason = true;
            client->reason.code = frame->status->code;
            snprintf(client->reason.message, sizeof client->reason.message, "%s", frame->status->message);
            break;
        case HOME__V1__FRAME__KIND_HELLO_REPLY:
            if (!client->hello_frame) {
                client->hello_frame = frame;
                keep = true;
            }
            break;
        default:
            break;
        }
    } else {
        homed_stream *call = find_call(client, frame->call_id);
        if (call && frame->kind_case == HOME__V1__FRAME__KIND_MESSAGE) {
            queue_message(client, call, &frame->message->payload);
        } else if (call && frame->kind_case == HOME__V1__FRAME__KIND_STATUS) {
            homed_status end = {.code = frame->status->code};
            snprintf(end.message, sizeof end.message, "%s", frame->status->message);
            end_call(client, call, &end);
        }
        /* A frame for no call of ours (one given up on) is dropped. */
    }
    if (!keep) protobuf_c_message_free_unpacked(&frame->base, NULL);
    return !client->broken;
}

/* Waits until bytes arrive (or the deadline passes) and dispatches every
 * complete frame among them. DEADLINE_EXCEEDED when nothing came in time (the
 * connection is fine); the connection's error once it has failed. */
static int read_some(homed_client *client, int64_t deadline, homed_status *status) {
    if (client->broken) return copy_status(status, &client->error);
    struct pollfd descriptor = {.fd = client->fd, .events = POLLIN};
    int ready = poll(&descriptor, 1, poll_wait(deadline));
    if (ready < 0) {
        if (errno == EINTR) return ok(status);
        break_connection(client, false, HOME__V1__STATUS_CODE__UNAVAILABLE, "waiting for homed failed: %s", strerror(errno));
        return copy_status(status, &client->error);
    }
    if (ready == 0) return set_status(status, HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, "nothing arrived in time");
    uint8_t *space;
    size_t room = frame_reader_space(&client->reader, READ_CHUNK, &space);
    if (room == 0) {
        break_connection(client, false, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, "out of memory reading from homed");
        return copy_status(status, &client->error);
    }
    ssize_t count = recv(client->fd, space, room < READ_CHUNK ? room : READ_CHUNK, 0);
    if (count < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return ok(status);
        break_connection(client, true, HOME__V1__STATUS_CODE__UNAVAILABLE, "reading from homed failed: %s", strerror(errno));
        return copy_status(status, &client->error);
    }
    if (count == 0) {
        size_t pending = frame_reader_pending(&client->reader);
        if (pending)
            break_connection(client, true, HOME__V1__STATUS_CODE__UNAVAILABLE,
                             "homed closed the connection in the middle of a frame (%zu bytes of it had come)", pending);
        else
            break_connection(client, true, HOME__V1__STATUS_CODE__UNAVAILABLE, "homed closed the connection");
        return copy_status(status, &client->error);
    }
    frame_reader_commit(&client->reader, (size_t)count);
    for (;;) {
        const uint8_t *body;
        size_t length;
        uint32_t announced;
        frame_result result = frame_reader_next(&client->reader, &body, &length, &announced);
        if (result == FRAME_NEED_MORE) break;
        if (result == FRAME_TOO_LARGE) {
            client->broken_by_garbage = true;
            break_connection(client, false, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED,
                             "homed sent a frame of %u bytes, above the connection's limit of %u bytes; the connection is closed",
                             announced, client->reader.max_frame_size);
            return copy_status(status, &client->error);
        }
        if (!dispatch(client, body, length)) return copy_status(status, &client->error);
    }
    return ok(status);
}

/* ---- connecting -------------------------------------------------------- */

static int say_hello(homed_client *client, const homed_options *options, int64_t deadline, homed_status *status) {
    Home__V1__Hello hello = HOME__V1__HELLO__INIT;
    hello.protocol_version = options->protocol_version ? options->protocol_version : HOMED_PROTOCOL_VERSION;
    hello.client_name = (char *)(options->client_name ? options->client_name : "libhomed-client");
    hello.max_frame_size = options->max_frame_size;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_HELLO;
    frame.hello = &hello;
    int code = send_frame(client, &frame, deadline, status);
    if (code) return code;
    while (!client->hello_frame) {
        if (client->has_reason) return copy_status(status, &client->reason); /* the daemon refused the hello */
        code = read_some(client, deadline, status);
        if (client->broken) {
            if (client->broken_by_garbage)
                return set_status(status, HOME__V1__STATUS_CODE__INTERNAL,
                                  "%s is not homed's socket: the program listening there does not speak homed's protocol (%s)",
                                  client->path, client->error.message);
            if (client->has_reason) return copy_status(status, &client->reason);
            return set_status(status, client->error.code, "%s during the hello, on %s", client->error.message,
                              client->path);
        }
        if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED)
            return set_status(status, code, "%s did not answer the hello within %d ms; is it homed's socket?",
                              client->path, options->timeout_ms ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS);
    }
    uint32_t limit = client->hello_frame->hello_reply->max_frame_size;
    if (limit) {
        client->max_frame_size = limit;
        client->reader.max_frame_size = limit;
    }
    return ok(status);
}

static int open_socket(homed_client *client, const char *source, homed_status *status) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(client->path) >= sizeof address.sun_path)
        return set_status(status, HOME__V1__STATUS_CODE__INVALID_ARGUMENT,
                          "the socket path %s is %zu bytes long; a Unix socket path holds at most %zu", client->path,
                          strlen(client->path), sizeof address.sun_path - 1);
    strcpy(address.sun_path, client->path);
    client->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client->fd < 0)
        return set_status(status, HOME__V1__STATUS_CODE__UNAVAILABLE, "cannot make a socket: %s", strerror(errno));
    int result;
    do {
        result = connect(client->fd, (struct sockaddr *)&address, sizeof address);
    } while (result < 0 && errno == EINTR);
    if (result < 0) {
        int failure = errno;
        close(client->fd);
        client->fd = -1;
        if (failure == EACCES || failure == EPERM)
            return set_status(status, HOME__V1__STATUS_CODE__PERMISSION_DENIED,
                              "cannot connect to homed on %s: %s (the socket path is from %s; the socket's mode and "
                              "group decide who may connect)",
                              client->path, strerror(failure), source);
        return set_status(status, HOME__V1__STATUS_CODE__UNAVAILABLE,
                          "cannot reach homed: no daemon is listening on %s (%s) (the socket path is from %s; start "
                          "homed with `homed`, or `systemctl start homed` for the system service)",
                          client->path, strerror(failure), source);
    }
    /* Non-blocking from here: every wait is a poll with its deadline. */
    fcntl(client->fd, F_SETFL, fcntl(client->fd, F_GETFL) | O_NONBLOCK);
    return ok(status);
}

int homed_connect(const char *path, const homed_options *options, homed_client **out, homed_status *status) {
    static const homed_options defaults = {0};
    if (!options) options = &defaults;
    *out = NULL;
    char default_path[4096];
    const char *source = "the path given";
    if (!path) {
        path = homed_default_socket_path(default_path, sizeof default_path, &source);
        if (!path) return set_status(status, HOME__V1__STATUS_CODE__INVALID_ARGUMENT, "the default socket path is too long");
    }
    homed_client *client = calloc(1, sizeof *client);
    if (!client || !(client->path = strdup(path))) {
        free(client);
        return set_status(status, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, "out of memory");
    }
    client->fd = -1;
    client->next_call_id = 1;
    client->next_nonce = 1;
    client->max_frame_size = HOMED_DEFAULT_MAX_FRAME_SIZE;
    frame_reader_init(&client->reader, HOMED_DEFAULT_MAX_FRAME_SIZE);
    int code = open_socket(client, source, status);
    if (!code) {
        int timeout = options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
        code = say_hello(client, options, deadline_after(timeout), status);
    }
    if (code) {
        homed_close(client);
        return code;
    }
    *out = client;
    return ok(status);
}

void homed_close(homed_client *client) {
    if (!client) return;
    homed_status closed = {.code = HOME__V1__STATUS_CODE__UNAVAILABLE};
    snprintf(closed.message, sizeof closed.message, "the client closed the connection");
    while (client->calls) end_call(client, client->calls, &closed);
    if (client->fd >= 0) close(client->fd);
    if (client->hello_frame) protobuf_c_message_free_unpacked(&client->hello_frame->base, NULL);
    if (client->go_away_frame) protobuf_c_message_free_unpacked(&client->go_away_frame->base, NULL);
    frame_reader_free(&client->reader);
    free(client->path);
    free(client);
}

const Home__V1__HelloReply *homed_hello_reply(const homed_client *client) {
    return client->hello_frame ? client->hello_frame->hello_reply : NULL;
}

const Home__V1__GoAway *homed_go_away(const homed_client *client) {
    return client->go_away_frame ? client->go_away_frame->go_away : NULL;
}

int homed_fd(const homed_client *client) {
    return client->fd;
}

/* ---- calls ------------------------------------------------------------- */

static char *full_method_name(const char *method) {
    if (strchr(method, '/')) return strdup(method);
    size_t length = strlen(SERVICE_PREFIX) + strlen(method) + 1;
    char *name = malloc(length);
    if (name) snprintf(name, length, "%s%s", SERVICE_PREFIX, method);
    return name;
}

static uint64_t free_call_id(homed_client *client) {
    while (client->next_call_id == 0 || find_call(client, client->next_call_id)) client->next_call_id++;
    return client->next_call_id++;
}

/* Sends the open frame of a new call; on success *out is the call, in the list. */
static int open_call(homed_client *client, const char *method, const ProtobufCMessage *request,
                     const ProtobufCMessageDescriptor *message_type, int timeout_ms, homed_stream **out,
                     homed_status *status) {
    *out = NULL;
    if (client->broken) return copy_status(status, &client->error);
    const Home__V1__GoAway *go_away = homed_go_away(client);
    if (go_away)
        return set_status(status, HOME__V1__STATUS_CODE__UNAVAILABLE, "homed is shutting down: %s", go_away->reason);
    homed_stream *call = calloc(1, sizeof *call);
    if (!call || !(call->method = full_method_name(method))) {
        free(call);
        return set_status(status, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, "out of memory");
    }
    call->message_type = message_type;
    call->call_id = free_call_id(client);

    size_t request_size = request ? protobuf_c_message_get_packed_size(request) : 0;
    uint8_t *request_bytes = request_size ? malloc(request_size) : NULL;
    if (request_size && !request_bytes) {
        destroy_call(call);
        return set_status(status, HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, "out of memory for a request of %zu bytes", request_size);
    }
    if (request_size) protobuf_c_message_pack(request, request_bytes);
    Home__V1__CallOpen open = HOME__V1__CALL_OPEN__INIT;
    open.method = call->method;
    open.request.data = request_bytes;
    open.request.len = request_size;
    if (timeout_ms >= 0) {
        open.timeout_present_case = HOME__V1__CALL_OPEN__TIMEOUT_PRESENT_TIMEOUT_MS;
        open.timeout_ms = (uint32_t)timeout_ms;
    }
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.call_id = call->call_id;
    frame.kind_case = HOME__V1__FRAME__KIND_OPEN;
    frame.open = &open;
    int code = send_frame(client, &frame, deadline_after(timeout_ms < 0 ? 10000 : timeout_ms + 1000), status);
    free(request_bytes);
    if (code) {
        destroy_call(call);
        return code;
    }
    call->client = client;
    call->next = client->calls;
    client->calls = call;
    *out = call;
    return ok(status);
}

static int send_cancel(homed_stream *call, homed_status *status) {
    if (call->ended || call->cancelled || !call->client) return ok(status);
    call->cancelled = true;
    Home__V1__CallCancel cancel = HOME__V1__CALL_CANCEL__INIT;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.call_id = call->call_id;
    frame.kind_case = HOME__V1__FRAME__KIND_CANCEL;
    frame.cancel = &cancel;
    return send_frame(call->client, &frame, deadline_after(5000), status);
}

/* Decodes the first queued message of `call` and takes it off the queue. */
static int take_message(homed_stream *call, ProtobufCMessage **message, homed_status *status) {
    queued_message *first = call->head;
    call->head = first->next;
    if (!call->head) call->tail = NULL;
    *message = protobuf_c_message_unpack(call->message_type, NULL, first->length, first->data);
    size_t length = first->length;
    free(first);
    if (!*message)
        return set_status(status, HOME__V1__STATUS_CODE__INTERNAL,
                          "%s: a message of %zu bytes does not decode as %s", call->method, length,
                          call->message_type->name);
    return ok(status);
}

int homed_call(homed_client *client, const char *method, const ProtobufCMessage *request,
               const ProtobufCMessageDescriptor *response_type, int timeout_ms, ProtobufCMessage **response,
               homed_status *status) {
    *response = NULL;
    homed_stream *call;
    int code = open_call(client, method, request, response_type, timeout_ms, &call, status);
    if (code) return code;
    int64_t deadline = deadline_after(timeout_ms < 0 ? -1 : timeout_ms + 1000);
    while (!call->ended) {
        code = read_some(client, deadline, status);
        if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED && !call->ended && !client->broken) {
            send_cancel(call, NULL);
            call->detached = true; /* freed when its status comes, if it does */
            free_messages(call);
            return set_status(status, code, "%s: no answer within %d ms", call->method, timeout_ms);
        }
    }
    if (call->end.code != HOME__V1__STATUS_CODE__OK) {
        code = copy_status(status, &call->end);
        destroy_call(call);
        return code;
    }
    size_t count = 0;
    for (queued_message *message = call->head; message; message = message->next) count++;
    if (count != 1) {
        code = set_status(status, HOME__V1__STATUS_CODE__INTERNAL, "%s: expected one response message, got %zu",
                          call->method, count);
    } else {
        code = take_message(call, response, status);
    }
    destroy_call(call);
    return code;
}

int homed_stream_open(homed_client *client, const char *method, const ProtobufCMessage *request,
                      const ProtobufCMessageDescriptor *message_type, int timeout_ms, homed_stream **stream,
                      homed_status *status) {
    return open_call(client, method, request, message_type, timeout_ms, stream, status);
}

int homed_subscribe(homed_client *client, const Home__V1__SubscribeRequest *request, homed_stream **stream,
                    homed_status *status) {
    return open_call(client, "Subscribe", request ? &request->base : NULL, &home__v1__subscribe_response__descriptor,
                     HOMED_NO_TIMEOUT, stream, status);
}

int homed_stream_next(homed_stream *stream, int wait_ms, ProtobufCMessage **message, homed_status *status) {
    *message = NULL;
    int64_t deadline = deadline_after(wait_ms);
    for (;;) {
        if (stream->head) return take_message(stream, message, status);
        if (stream->ended) {
            if (stream->cancelled && stream->end.code == HOME__V1__STATUS_CODE__CANCELLED) return ok(status);
            return copy_status(status, &stream->end);
        }
        int code = read_some(stream->client, deadline, status);
        if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED && !stream->head && !stream->ended)
            return set_status(status, code, "%s: no message within %d ms", stream->method, wait_ms);
    }
}

int homed_stream_cancel(homed_stream *stream, homed_status *status) {
    return send_cancel(stream, status);
}

bool homed_stream_ended(const homed_stream *stream) {
    return stream->ended;
}

uint64_t homed_stream_call_id(const homed_stream *stream) {
    return stream->call_id;
}

void homed_stream_free(homed_stream *stream) {
    if (!stream) return;
    if (stream->ended || !stream->client) {
        destroy_call(stream);
        return;
    }
    send_cancel(stream, NULL);
    if (stream->ended || !stream->client) { /* the send failed and ended it */
        destroy_call(stream);
        return;
    }
    stream->detached = true;
    free_messages(stream);
}

int homed_process(homed_client *client, int wait_ms, homed_status *status) {
    int64_t deadline = deadline_after(wait_ms);
    int code = read_some(client, deadline, status);
    while (code == HOME__V1__STATUS_CODE__OK) code = read_some(client, deadline_after(0), status);
    if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED) return ok(status);
    return code;
}

int homed_ping(homed_client *client, int timeout_ms, homed_status *status) {
    Home__V1__Ping ping = HOME__V1__PING__INIT;
    ping.nonce = client->next_nonce++;
    client->awaited_pong = ping.nonce;
    client->pong_seen = false;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_PING;
    frame.ping = &ping;
    int64_t deadline = deadline_after(timeout_ms);
    int code = send_frame(client, &frame, deadline, status);
    while (!code && !client->pong_seen) {
        code = read_some(client, deadline, status);
        if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED)
            return set_status(status, code, "no pong within %d ms", timeout_ms);
    }
    return code;
}
