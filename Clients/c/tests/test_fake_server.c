/*
 * The client against a fake server that misbehaves: truncated, oversized and
 * garbage frames, a program that is not homed, a daemon that never answers,
 * pings in the middle of a call, a go-away. Each scenario runs a server in a
 * child process on a temporary socket; the client must return a clear error,
 * never hang, and (under AddressSanitizer) never read out of bounds or leak.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame_reader.h"
#include "homed/client.h"
#include "test_support.h"

static char socket_path[108];

/* ---- the server's side ------------------------------------------------- */

static void write_bytes(int fd, const void *bytes, size_t length) {
    const uint8_t *p = bytes;
    while (length) {
        ssize_t written = write(fd, p, length);
        if (written <= 0) _exit(3);
        p += written;
        length -= (size_t)written;
    }
}

static void send_frame(int fd, const Home__V1__Frame *frame) {
    uint8_t buffer[65536 + 8];
    size_t length = home__v1__frame__get_packed_size(frame);
    frame_header_write(buffer, (uint32_t)length);
    home__v1__frame__pack(frame, buffer + FRAME_HEADER_SIZE);
    write_bytes(fd, buffer, FRAME_HEADER_SIZE + length);
}

/* The next frame from the client; exits the server when the client is gone. */
static Home__V1__Frame *read_frame(int fd) {
    uint8_t header[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t count = read(fd, header + got, 4 - got);
        if (count <= 0) _exit(0);
        got += (size_t)count;
    }
    uint32_t length = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
    uint8_t *body = malloc(length ? length : 1);
    for (got = 0; got < length;) {
        ssize_t count = read(fd, body + got, length - got);
        if (count <= 0) _exit(0);
        got += (size_t)count;
    }
    Home__V1__Frame *frame = home__v1__frame__unpack(NULL, length, body);
    free(body);
    if (!frame) _exit(4);
    return frame;
}

static void send_hello_reply(int fd) {
    Home__V1__HelloReply reply = HOME__V1__HELLO_REPLY__INIT;
    reply.protocol_version = 1;
    reply.connection_id = 7;
    reply.max_frame_size = 65536;
    reply.journal_id = "fake-journal";
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_HELLO_REPLY;
    frame.hello_reply = &reply;
    send_frame(fd, &frame);
}

static void send_status(int fd, uint64_t call_id, int code, const char *message) {
    Home__V1__CallStatus status = HOME__V1__CALL_STATUS__INIT;
    status.code = code;
    status.message = (char *)message;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.call_id = call_id;
    frame.kind_case = HOME__V1__FRAME__KIND_STATUS;
    frame.status = &status;
    send_frame(fd, &frame);
}

static void send_message(int fd, uint64_t call_id, const uint8_t *payload, size_t length) {
    Home__V1__CallMessage message = HOME__V1__CALL_MESSAGE__INIT;
    message.payload.data = (uint8_t *)payload;
    message.payload.len = length;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.call_id = call_id;
    frame.kind_case = HOME__V1__FRAME__KIND_MESSAGE;
    frame.message = &message;
    send_frame(fd, &frame);
}

/* A GetStatusResponse, as the payload of a successful call. */
static size_t status_payload(uint8_t *buffer) {
    Home__V1__GetStatusResponse response = HOME__V1__GET_STATUS_RESPONSE__INIT;
    response.server_version = "fake";
    response.connection_id = 7;
    return home__v1__get_status_response__pack(&response, buffer);
}

/* Reads the hello, answers it, and reads the client's first call open. */
static uint64_t accept_first_call(int fd) {
    Home__V1__Frame *hello = read_frame(fd);
    if (hello->kind_case != HOME__V1__FRAME__KIND_HELLO) _exit(5);
    protobuf_c_message_free_unpacked(&hello->base, NULL);
    send_hello_reply(fd);
    Home__V1__Frame *open = read_frame(fd);
    if (open->kind_case != HOME__V1__FRAME__KIND_OPEN) _exit(6);
    uint64_t call_id = open->call_id;
    protobuf_c_message_free_unpacked(&open->base, NULL);
    return call_id;
}

typedef void (*scenario)(int fd);

/* Runs `serve` in a child on a fresh socket; returns its pid. */
static pid_t start_server(scenario serve) {
    snprintf(socket_path, sizeof socket_path, "/tmp/homed-c-test-%d-%ld.sock", (int)getpid(), (long)random());
    unlink(socket_path);
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, socket_path);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4)) {
        perror("fake server");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20); /* a server that is never released ends anyway */
        int fd = accept(listener, NULL, NULL);
        if (fd < 0) _exit(2);
        serve(fd);
        _exit(0);
    }
    close(listener);
    return pid;
}

static void stop_server(pid_t pid) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    unlink(socket_path);
}

/* Connects to the scenario's server; the hello is answered normally. */
static homed_client *connect_client(homed_status *status) {
    homed_client *client = NULL;
    homed_options options = {.client_name = "fake-test", .timeout_ms = 2000};
    CHECK_CODE(homed_connect(socket_path, &options, &client, status), HOME__V1__STATUS_CODE__OK, *status);
    return client;
}

static int get_status(homed_client *client, int timeout_ms, homed_status *status) {
    ProtobufCMessage *response = NULL;
    int code = homed_call(client, "GetStatus", NULL, &home__v1__get_status_response__descriptor, timeout_ms, &response,
                          status);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    return code;
}

/* ---- scenarios --------------------------------------------------------- */

static void serve_http(int fd) {
    const char *answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    write_bytes(fd, answer, strlen(answer));
    sleep(5);
}

static void a_program_that_is_not_homed_is_named_as_such(void) {
    pid_t server = start_server(serve_http);
    homed_client *client = NULL;
    homed_status status;
    CHECK_CODE(homed_connect(socket_path, NULL, &client, &status), HOME__V1__STATUS_CODE__INTERNAL, status);
    CHECK_CONTAINS(status.message, "is not homed's socket");
    CHECK_CONTAINS(status.message, socket_path);
    CHECK(client == NULL);
    stop_server(server);
}

static void serve_garbage_hello_reply(int fd) {
    const uint8_t garbage[] = {0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff};
    write_bytes(fd, garbage, sizeof garbage);
    sleep(5);
}

static void an_undecodable_hello_reply_is_named_as_such(void) {
    pid_t server = start_server(serve_garbage_hello_reply);
    homed_client *client = NULL;
    homed_status status;
    CHECK_CODE(homed_connect(socket_path, NULL, &client, &status), HOME__V1__STATUS_CODE__INTERNAL, status);
    CHECK_CONTAINS(status.message, "does not decode as home.v1.Frame");
    stop_server(server);
}

static void serve_silence(int fd) {
    sleep(10);
}

static void a_daemon_that_never_answers_the_hello_times_out(void) {
    pid_t server = start_server(serve_silence);
    homed_client *client = NULL;
    homed_status status;
    homed_options options = {.timeout_ms = 300};
    CHECK_CODE(homed_connect(socket_path, &options, &client, &status), HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, status);
    CHECK_CONTAINS(status.message, "did not answer the hello within 300 ms");
    stop_server(server);
}

static void serve_refusal(int fd) {
    Home__V1__Frame *hello = read_frame(fd);
    protobuf_c_message_free_unpacked(&hello->base, NULL);
    send_status(fd, 0, HOME__V1__STATUS_CODE__FAILED_PRECONDITION, "protocol version 1 is not spoken here");
}

static void a_refused_hello_returns_the_daemons_status(void) {
    pid_t server = start_server(serve_refusal);
    homed_client *client = NULL;
    homed_status status;
    CHECK_CODE(homed_connect(socket_path, NULL, &client, &status), HOME__V1__STATUS_CODE__FAILED_PRECONDITION, status);
    CHECK(strcmp(status.message, "protocol version 1 is not spoken here") == 0);
    stop_server(server);
}

static void no_daemon_at_all_says_how_to_start_one(void) {
    homed_client *client = NULL;
    homed_status status;
    CHECK_CODE(homed_connect("/tmp/homed-c-test-nothing-here.sock", NULL, &client, &status),
               HOME__V1__STATUS_CODE__UNAVAILABLE, status);
    CHECK_CONTAINS(status.message, "no daemon is listening on /tmp/homed-c-test-nothing-here.sock");
    CHECK_CONTAINS(status.message, "the socket path is from the path given");
    CHECK_CONTAINS(status.message, "start homed with `homed`");
}

static void serve_truncated(int fd) {
    accept_first_call(fd);
    const uint8_t cut[] = {0, 0, 0, 100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    write_bytes(fd, cut, sizeof cut);
}

static void a_frame_cut_short_fails_the_call(void) {
    pid_t server = start_server(serve_truncated);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__UNAVAILABLE, status);
        CHECK_CONTAINS(status.message, "in the middle of a frame (14 bytes of it had come)");
        /* The connection is over: the next call says so at once. */
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__UNAVAILABLE, status);
        homed_close(client);
    }
    stop_server(server);
}

static void serve_oversized(int fd) {
    accept_first_call(fd);
    const uint8_t header[] = {0, 1, 0, 1}; /* 65 537 bytes, one over the limit */
    write_bytes(fd, header, sizeof header);
    sleep(5);
}

static void a_frame_over_the_limit_fails_the_call(void) {
    pid_t server = start_server(serve_oversized);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, status);
        CHECK_CONTAINS(status.message, "a frame of 65537 bytes, above the connection's limit of 65536 bytes");
        homed_close(client);
    }
    stop_server(server);
}

static void serve_garbage_frame(int fd) {
    accept_first_call(fd);
    const uint8_t garbage[] = {0, 0, 0, 3, 0x0a, 0xff, 0xff};
    write_bytes(fd, garbage, sizeof garbage);
    sleep(5);
}

static void a_garbage_frame_fails_the_call(void) {
    pid_t server = start_server(serve_garbage_frame);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__INTERNAL, status);
        CHECK_CONTAINS(status.message, "does not decode as home.v1.Frame");
        homed_close(client);
    }
    stop_server(server);
}

static void serve_bad_payload_then_good(int fd) {
    uint64_t call = accept_first_call(fd);
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    send_message(fd, call, junk, sizeof junk);
    send_status(fd, call, HOME__V1__STATUS_CODE__OK, "");
    Home__V1__Frame *open = read_frame(fd);
    uint8_t payload[256];
    send_message(fd, open->call_id, payload, status_payload(payload));
    send_status(fd, open->call_id, HOME__V1__STATUS_CODE__OK, "");
    protobuf_c_message_free_unpacked(&open->base, NULL);
    sleep(5);
}

static void an_undecodable_response_fails_that_call_only(void) {
    pid_t server = start_server(serve_bad_payload_then_good);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__INTERNAL, status);
        CHECK_CONTAINS(status.message, "does not decode as home.v1.GetStatusResponse");
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__OK, status);
        homed_close(client);
    }
    stop_server(server);
}

static void serve_ping_before_answer(int fd) {
    uint64_t call = accept_first_call(fd);
    Home__V1__Ping ping = HOME__V1__PING__INIT;
    ping.nonce = 4242;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_PING;
    frame.ping = &ping;
    send_frame(fd, &frame);
    /* A frame for a call the client never opened: dropped. */
    send_status(fd, 999, HOME__V1__STATUS_CODE__OK, "");
    Home__V1__Frame *pong = read_frame(fd);
    bool answered = pong->kind_case == HOME__V1__FRAME__KIND_PONG && pong->pong->nonce == 4242;
    protobuf_c_message_free_unpacked(&pong->base, NULL);
    if (!answered) {
        send_status(fd, call, HOME__V1__STATUS_CODE__INTERNAL, "the ping was not answered");
    } else {
        /* The answer byte by byte: any split must do. */
        uint8_t payload[256];
        size_t length = status_payload(payload);
        Home__V1__CallMessage message = HOME__V1__CALL_MESSAGE__INIT;
        message.payload.data = payload;
        message.payload.len = length;
        Home__V1__Frame reply = HOME__V1__FRAME__INIT;
        reply.call_id = call;
        reply.kind_case = HOME__V1__FRAME__KIND_MESSAGE;
        reply.message = &message;
        uint8_t bytes[512];
        size_t size = home__v1__frame__get_packed_size(&reply);
        frame_header_write(bytes, (uint32_t)size);
        home__v1__frame__pack(&reply, bytes + 4);
        for (size_t i = 0; i < size + 4; i++) {
            write_bytes(fd, bytes + i, 1);
            usleep(200);
        }
        send_status(fd, call, HOME__V1__STATUS_CODE__OK, "");
    }
    sleep(5);
}

static void a_ping_during_a_call_is_answered(void) {
    pid_t server = start_server(serve_ping_before_answer);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 5000, &status), HOME__V1__STATUS_CODE__OK, status);
        homed_close(client);
    }
    stop_server(server);
}

static void serve_two_messages(int fd) {
    uint64_t call = accept_first_call(fd);
    uint8_t payload[256];
    size_t length = status_payload(payload);
    send_message(fd, call, payload, length);
    send_message(fd, call, payload, length);
    send_status(fd, call, HOME__V1__STATUS_CODE__OK, "");
    sleep(5);
}

static void a_unary_call_with_two_answers_is_an_error(void) {
    pid_t server = start_server(serve_two_messages);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__INTERNAL, status);
        CHECK_CONTAINS(status.message, "expected one response message, got 2");
        homed_close(client);
    }
    stop_server(server);
}

static void serve_never_answering_call(int fd) {
    accept_first_call(fd);
    Home__V1__Frame *cancel = read_frame(fd);
    bool cancelled = cancel->kind_case == HOME__V1__FRAME__KIND_CANCEL;
    protobuf_c_message_free_unpacked(&cancel->base, NULL);
    /* The cancel came: answer the next call, so the client can tell. */
    Home__V1__Frame *open = read_frame(fd);
    uint8_t payload[256];
    if (cancelled) send_message(fd, open->call_id, payload, status_payload(payload));
    send_status(fd, open->call_id, cancelled ? HOME__V1__STATUS_CODE__OK : HOME__V1__STATUS_CODE__INTERNAL, "no cancel");
    protobuf_c_message_free_unpacked(&open->base, NULL);
    sleep(5);
}

static void a_call_with_no_answer_times_out_and_is_cancelled(void) {
    pid_t server = start_server(serve_never_answering_call);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        CHECK_CODE(get_status(client, 100, &status), HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, status);
        CHECK_CONTAINS(status.message, "home.v1.HomeService/GetStatus: no answer within 100 ms");
        CHECK_CODE(get_status(client, 2000, &status), HOME__V1__STATUS_CODE__OK, status);
        homed_close(client);
    }
    stop_server(server);
}

static void serve_stream_then_go_away(int fd) {
    uint64_t call = accept_first_call(fd);
    Home__V1__SubscribeResponse response = HOME__V1__SUBSCRIBE_RESPONSE__INIT;
    response.journal_id = "fake-journal";
    uint8_t payload[256];
    size_t length = home__v1__subscribe_response__pack(&response, payload);
    for (int i = 0; i < 3; i++) send_message(fd, call, payload, length);
    Home__V1__GoAway go_away = HOME__V1__GO_AWAY__INIT;
    go_away.reason = "homed is stopping";
    go_away.last_call_id = call;
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_GO_AWAY;
    frame.go_away = &go_away;
    send_frame(fd, &frame);
    send_status(fd, call, HOME__V1__STATUS_CODE__UNAVAILABLE, "the daemon is shutting down");
}

static void a_stream_delivers_its_messages_then_the_go_away(void) {
    pid_t server = start_server(serve_stream_then_go_away);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        homed_stream *stream = NULL;
        CHECK_CODE(homed_subscribe(client, NULL, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
        int messages = 0, code;
        ProtobufCMessage *message;
        while ((code = homed_stream_next(stream, 5000, &message, &status)) == 0 && message) {
            messages++;
            protobuf_c_message_free_unpacked(message, NULL);
        }
        CHECK(messages == 3);
        CHECK_CODE(code, HOME__V1__STATUS_CODE__UNAVAILABLE, status);
        CHECK(homed_stream_ended(stream));
        CHECK(homed_go_away(client) && strcmp(homed_go_away(client)->reason, "homed is stopping") == 0);
        /* No new call after a go-away. */
        CHECK_CODE(get_status(client, 1000, &status), HOME__V1__STATUS_CODE__UNAVAILABLE, status);
        CHECK_CONTAINS(status.message, "shutting down");
        homed_stream_free(stream);
        homed_close(client);
    }
    stop_server(server);
}

static void serve_reason_then_close(int fd) {
    accept_first_call(fd);
    send_status(fd, 0, HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, "no pong within 20 s");
}

static void a_status_on_call_0_before_the_close_is_the_reason(void) {
    pid_t server = start_server(serve_reason_then_close);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        homed_stream *stream = NULL;
        CHECK_CODE(homed_subscribe(client, NULL, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
        ProtobufCMessage *message;
        CHECK_CODE(homed_stream_next(stream, 5000, &message, &status), HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, status);
        CHECK(strcmp(status.message, "no pong within 20 s") == 0);
        CHECK(homed_stream_ended(stream));
        /* Closing the client before freeing the stream is allowed. */
        homed_close(client);
        homed_stream_free(stream);
    }
    stop_server(server);
}

static void serve_one_call(int fd) {
    accept_first_call(fd);
    sleep(5);
}

static void a_request_over_the_limit_is_refused_before_sending(void) {
    pid_t server = start_server(serve_one_call);
    homed_status status;
    homed_client *client = connect_client(&status);
    if (client) {
        homed_stream *stream;
        CHECK_CODE(homed_subscribe(client, NULL, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
        static uint64_t ids[40000];
        for (size_t i = 0; i < 40000; i++) ids[i] = 1000000 + i;
        Home__V1__ReadCharacteristicsRequest read = HOME__V1__READ_CHARACTERISTICS_REQUEST__INIT;
        read.characteristic_ids = ids;
        read.n_characteristic_ids = 40000;
        ProtobufCMessage *response;
        CHECK_CODE(homed_call(client, "ReadCharacteristics", &read.base,
                              &home__v1__read_characteristics_response__descriptor, 1000, &response, &status),
                   HOME__V1__STATUS_CODE__RESOURCE_EXHAUSTED, status);
        CHECK_CONTAINS(status.message, "the connection's limit is 65536 bytes");
        /* Nothing was sent: the stream is still open and waiting. */
        CHECK(!homed_stream_ended(stream));
        homed_stream_free(stream);
        homed_close(client);
    }
    stop_server(server);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    RUN(a_program_that_is_not_homed_is_named_as_such);
    RUN(an_undecodable_hello_reply_is_named_as_such);
    RUN(a_daemon_that_never_answers_the_hello_times_out);
    RUN(a_refused_hello_returns_the_daemons_status);
    RUN(no_daemon_at_all_says_how_to_start_one);
    RUN(a_frame_cut_short_fails_the_call);
    RUN(a_frame_over_the_limit_fails_the_call);
    RUN(a_garbage_frame_fails_the_call);
    RUN(an_undecodable_response_fails_that_call_only);
    RUN(a_ping_during_a_call_is_answered);
    RUN(a_unary_call_with_two_answers_is_an_error);
    RUN(a_call_with_no_answer_times_out_and_is_cancelled);
    RUN(a_stream_delivers_its_messages_then_the_go_away);
    RUN(a_status_on_call_0_before_the_close_is_the_reason);
    RUN(a_request_over_the_limit_is_refused_before_sending);
    FINISH();
}
