/*
 * The framing and the cursor, with no daemon: frames split at every byte,
 * lengths over the limit, the golden frames of Tests/Fixtures/frames (encoded
 * byte for byte, decoded), and the resume rule message by message.
 *
 *     test_frames DIRECTORY-OF-GOLDEN-FRAMES
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_reader.h"
#include "homed/client.h"
#include "test_support.h"

static const char *golden_directory;

static uint8_t *read_file(const char *name, size_t *size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", golden_directory, name);
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)length);
    if (!bytes || fread(bytes, 1, (size_t)length, file) != (size_t)length) exit(1);
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

/* Feeds `stream` to a reader in pieces of `piece` bytes; returns the frames' total body bytes. */
static size_t feed(const uint8_t *stream, size_t size, size_t piece, size_t *frames) {
    frame_reader reader;
    frame_reader_init(&reader, 1024);
    size_t total = 0;
    *frames = 0;
    for (size_t offset = 0; offset < size; offset += piece) {
        size_t count = size - offset < piece ? size - offset : piece;
        uint8_t *space;
        size_t room = frame_reader_space(&reader, count, &space);
        CHECK(room >= count);
        memcpy(space, stream + offset, count);
        frame_reader_commit(&reader, count);
        const uint8_t *body;
        size_t length;
        uint32_t announced;
        while (frame_reader_next(&reader, &body, &length, &announced) == FRAME_READY) {
            Home__V1__Frame *frame = home__v1__frame__unpack(NULL, length, body);
            CHECK(frame != NULL);
            if (frame) protobuf_c_message_free_unpacked(&frame->base, NULL);
            total += length;
            (*frames)++;
        }
    }
    CHECK(frame_reader_pending(&reader) == 0);
    frame_reader_free(&reader);
    return total;
}

static void frames_split_anywhere_come_out_whole(void) {
    const char *names[] = {"hello.bin", "open_read_characteristics.bin", "status_not_found.bin",
                           "message_subscribe_value_event.bin"};
    uint8_t stream[4096];
    size_t size = 0, bodies = 0;
    for (size_t i = 0; i < 4; i++) {
        size_t length;
        uint8_t *bytes = read_file(names[i], &length);
        memcpy(stream + size, bytes, length);
        size += length;
        bodies += length - FRAME_HEADER_SIZE;
        free(bytes);
    }
    for (size_t piece = 1; piece <= size; piece++) {
        size_t frames;
        CHECK(feed(stream, size, piece, &frames) == bodies);
        CHECK(frames == 4);
    }
}

static void a_length_over_the_limit_is_refused_before_anything_is_allocated(void) {
    frame_reader reader;
    frame_reader_init(&reader, 65536);
    const uint8_t header[] = {0x7f, 0xff, 0xff, 0xff, 0x00};
    uint8_t *space;
    frame_reader_space(&reader, sizeof header, &space);
    memcpy(space, header, sizeof header);
    frame_reader_commit(&reader, sizeof header);
    const uint8_t *body;
    size_t length;
    uint32_t announced = 0;
    CHECK(frame_reader_next(&reader, &body, &length, &announced) == FRAME_TOO_LARGE);
    CHECK(announced == 0x7fffffff);
    CHECK(reader.capacity < 65536);
    frame_reader_free(&reader);
}

static void a_stream_cut_inside_a_frame_leaves_bytes_pending(void) {
    size_t size;
    uint8_t *bytes = read_file("hello.bin", &size);
    frame_reader reader;
    frame_reader_init(&reader, 65536);
    uint8_t *space;
    frame_reader_space(&reader, size - 1, &space);
    memcpy(space, bytes, size - 1);
    frame_reader_commit(&reader, size - 1);
    const uint8_t *body;
    size_t length;
    uint32_t announced;
    CHECK(frame_reader_next(&reader, &body, &length, &announced) == FRAME_NEED_MORE);
    CHECK(frame_reader_pending(&reader) == size - 1);
    frame_reader_free(&reader);
    free(bytes);
}

/* The bytes protobuf-c makes for `frame`, with the length prefix, equal `name`. */
static void check_encodes_as(const Home__V1__Frame *frame, const char *name) {
    size_t size;
    uint8_t *golden = read_file(name, &size);
    size_t length = home__v1__frame__get_packed_size(frame);
    uint8_t *bytes = malloc(FRAME_HEADER_SIZE + length);
    frame_header_write(bytes, (uint32_t)length);
    home__v1__frame__pack(frame, bytes + FRAME_HEADER_SIZE);
    CHECK(size == FRAME_HEADER_SIZE + length);
    CHECK(size == FRAME_HEADER_SIZE + length && memcmp(bytes, golden, size) == 0);
    free(bytes);
    free(golden);
}

static void the_golden_frames_are_encoded_byte_for_byte(void) {
    Home__V1__Hello hello = HOME__V1__HELLO__INIT;
    hello.protocol_version = 1;
    hello.client_name = "homectl";
    Home__V1__Frame frame = HOME__V1__FRAME__INIT;
    frame.kind_case = HOME__V1__FRAME__KIND_HELLO;
    frame.hello = &hello;
    check_encodes_as(&frame, "hello.bin");

    uint64_t ids[] = {7, 8};
    Home__V1__ReadCharacteristicsRequest read = HOME__V1__READ_CHARACTERISTICS_REQUEST__INIT;
    read.characteristic_ids = ids;
    read.n_characteristic_ids = 2;
    uint8_t request[16];
    size_t request_size = home__v1__read_characteristics_request__pack(&read, request);
    Home__V1__CallOpen open = HOME__V1__CALL_OPEN__INIT;
    open.method = "home.v1.HomeService/ReadCharacteristics";
    open.request.data = request;
    open.request.len = request_size;
    Home__V1__Frame open_frame = HOME__V1__FRAME__INIT;
    open_frame.call_id = 1;
    open_frame.kind_case = HOME__V1__FRAME__KIND_OPEN;
    open_frame.open = &open;
    check_encodes_as(&open_frame, "open_read_characteristics.bin");
}

static void the_golden_frames_decode(void) {
    size_t size;
    uint8_t *bytes = read_file("status_not_found.bin", &size);
    Home__V1__Frame *frame = home__v1__frame__unpack(NULL, size - FRAME_HEADER_SIZE, bytes + FRAME_HEADER_SIZE);
    CHECK(frame && frame->kind_case == HOME__V1__FRAME__KIND_STATUS);
    if (frame && frame->status) CHECK(frame->status->code == HOME__V1__STATUS_CODE__NOT_FOUND);
    if (frame) protobuf_c_message_free_unpacked(&frame->base, NULL);
    free(bytes);

    bytes = read_file("message_subscribe_value_event.bin", &size);
    frame = home__v1__frame__unpack(NULL, size - FRAME_HEADER_SIZE, bytes + FRAME_HEADER_SIZE);
    CHECK(frame && frame->kind_case == HOME__V1__FRAME__KIND_MESSAGE);
    if (frame && frame->message) {
        Home__V1__SubscribeResponse *response = home__v1__subscribe_response__unpack(
            NULL, frame->message->payload.len, frame->message->payload.data);
        CHECK(response && response->n_events == 1);
        if (response && response->n_events == 1) {
            CHECK(response->events[0]->kind == HOME__V1__EVENT_KIND__EVENT_VALUE_CHANGED);
            CHECK(response->events[0]->body_case == HOME__V1__EVENT__BODY_VALUE);
        }
        if (response) protobuf_c_message_free_unpacked(&response->base, NULL);
    }
    if (frame) protobuf_c_message_free_unpacked(&frame->base, NULL);
    free(bytes);
}

/* ---- the cursor -------------------------------------------------------- */

typedef struct built {
    Home__V1__SubscribeResponse response;
    Home__V1__StreamMarker marker;
    Home__V1__Event events[8];
    Home__V1__ValueChange values[8];
    Home__V1__Event *pointers[8];
} built;

/* A stream message: events as (seq, characteristic) pairs ending with 0. */
static Home__V1__SubscribeResponse *message(built *b, const char *journal, const uint64_t *pairs, int marker_kind,
                                            uint64_t marker_seq, int64_t resume_after) {
    memset(b, 0, sizeof *b);
    b->response = (Home__V1__SubscribeResponse)HOME__V1__SUBSCRIBE_RESPONSE__INIT;
    b->response.journal_id = (char *)journal;
    size_t n = 0;
    for (; pairs && pairs[2 * n]; n++) {
        b->values[n] = (Home__V1__ValueChange)HOME__V1__VALUE_CHANGE__INIT;
        b->values[n].characteristic_id = pairs[2 * n + 1];
        b->events[n] = (Home__V1__Event)HOME__V1__EVENT__INIT;
        b->events[n].seq = pairs[2 * n];
        b->events[n].kind = HOME__V1__EVENT_KIND__EVENT_VALUE_CHANGED;
        b->events[n].body_case = HOME__V1__EVENT__BODY_VALUE;
        b->events[n].value = &b->values[n];
        b->pointers[n] = &b->events[n];
    }
    b->response.events = b->pointers;
    b->response.n_events = n;
    if (marker_kind) {
        b->marker = (Home__V1__StreamMarker)HOME__V1__STREAM_MARKER__INIT;
        b->marker.kind = marker_kind;
        b->marker.seq = marker_seq;
        b->response.marker = &b->marker;
    }
    if (resume_after >= 0) {
        b->response.resume_present_case = HOME__V1__SUBSCRIBE_RESPONSE__RESUME_PRESENT_RESUME_AFTER;
        b->response.resume_after = (uint64_t)resume_after;
    }
    return &b->response;
}

/* The seqs of the fresh events, as "5,6". */
static const char *accepted(homed_cursor *cursor, Home__V1__SubscribeResponse *response) {
    static char text[128];
    unsigned char fresh[8] = {0};
    homed_cursor_accept(cursor, response, fresh);
    text[0] = 0;
    for (size_t i = 0; i < response->n_events; i++) {
        if (!fresh[i]) continue;
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%llu", used ? "," : "", (unsigned long long)response->events[i]->seq);
    }
    return text;
}

static void without_held_values_the_resume_point_is_the_highest_seq(void) {
    homed_cursor *cursor = homed_cursor_new();
    built b;
    CHECK(!homed_cursor_has_resume_point(cursor));
    CHECK(strcmp(accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED, 4, -1)), "") == 0);
    CHECK(homed_cursor_resume_seq(cursor) == 4);
    uint64_t events[] = {5, 10, 6, 11, 0};
    CHECK(strcmp(accepted(cursor, message(&b, "j", events, 0, 0, -1)), "5,6") == 0);
    CHECK(homed_cursor_resume_seq(cursor) == 6);
    Home__V1__SubscribeRequest request = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    request.snapshot = 1;
    homed_cursor_resume(cursor, &request);
    CHECK(request.since_present_case == HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ);
    CHECK(request.since_seq == 6 && strcmp(request.journal_id, "j") == 0 && !request.snapshot);
    homed_cursor_free(cursor);
}

static void a_replay_after_held_values_repeats_nothing_and_regresses_no_value(void) {
    homed_cursor *cursor = homed_cursor_new();
    built b;
    accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED, 4, -1));
    uint64_t first[] = {6, 11, 0}, second[] = {8, 10, 0};
    CHECK(strcmp(accepted(cursor, message(&b, "j", first, 0, 0, 4)), "6") == 0);
    CHECK(strcmp(accepted(cursor, message(&b, "j", second, 0, 0, 6)), "8") == 0);
    CHECK(homed_cursor_resume_seq(cursor) == 6);
    accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED, 6, -1));
    uint64_t replay[] = {7, 9, 8, 10, 10, 11, 0};
    CHECK(strcmp(accepted(cursor, message(&b, "j", replay, 0, 0, -1)), "7,10") == 0);
    CHECK(homed_cursor_resume_seq(cursor) == 10);
    homed_cursor_free(cursor);

    /* An older value of a characteristic whose later value was delivered is stale. */
    cursor = homed_cursor_new();
    accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED, 2, -1));
    uint64_t held[] = {6, 10, 0}, stale[] = {4, 20, 5, 10, 7, 10, 0};
    accepted(cursor, message(&b, "j", held, 0, 0, 3));
    CHECK(strcmp(accepted(cursor, message(&b, "j", stale, 0, 0, -1)), "4,7") == 0);
    homed_cursor_free(cursor);
}

static void a_resync_and_a_new_journal_forget_everything(void) {
    homed_cursor *cursor = homed_cursor_new();
    built b;
    accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED, 2, -1));
    uint64_t held[] = {5, 30, 0};
    accepted(cursor, message(&b, "j", held, 0, 0, 2));
    accepted(cursor, message(&b, "j", NULL, HOME__V1__MARKER_KIND__MARKER_RESYNC, 50, -1));
    CHECK(homed_cursor_resume_seq(cursor) == 50);
    uint64_t again[] = {5, 30, 0};
    CHECK(strcmp(accepted(cursor, message(&b, "other", again, 0, 0, -1)), "5") == 0);
    CHECK(strcmp(homed_cursor_journal_id(cursor), "other") == 0);
    homed_cursor_free(cursor);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_frames DIRECTORY-OF-GOLDEN-FRAMES\n");
        return 2;
    }
    golden_directory = argv[1];
    RUN(frames_split_anywhere_come_out_whole);
    RUN(a_length_over_the_limit_is_refused_before_anything_is_allocated);
    RUN(a_stream_cut_inside_a_frame_leaves_bytes_pending);
    RUN(the_golden_frames_are_encoded_byte_for_byte);
    RUN(the_golden_frames_decode);
    RUN(without_held_values_the_resume_point_is_the_highest_seq);
    RUN(a_replay_after_held_values_repeats_nothing_and_regresses_no_value);
    RUN(a_resync_and_a_new_journal_forget_everything);
    FINISH();
}
