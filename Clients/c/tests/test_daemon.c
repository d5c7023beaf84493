/*
 * The client against a real homed (`homed --demo --no-simulator`, started by
 * tests/run.sh on the socket in $HOMED_SOCKET): hello, reads and writes with
 * their errors, a subscription seeing another connection's write, cancel,
 * resume after a disconnect with nothing lost or repeated, resync, deadlines.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homed/client.h"
#include "test_support.h"

static uint64_t brightness_id;

static homed_client *connect_named(const char *name) {
    homed_client *client = NULL;
    homed_status status;
    homed_options options = {.client_name = name};
    CHECK_CODE(homed_connect(NULL, &options, &client, &status), HOME__V1__STATUS_CODE__OK, status);
    if (!client) exit(1);
    return client;
}

/* Writes `value` to Brightness; returns the write's seq (0 on failure). */
static uint64_t write_brightness(homed_client *client, int64_t value, homed_status *item_error) {
    Home__V1__Value number = HOME__V1__VALUE__INIT;
    number.kind_case = HOME__V1__VALUE__KIND_INT_VALUE;
    number.int_value = value;
    Home__V1__CharacteristicWrite write = HOME__V1__CHARACTERISTIC_WRITE__INIT;
    write.characteristic_id = brightness_id;
    write.value = &number;
    Home__V1__CharacteristicWrite *writes[] = {&write};
    Home__V1__WriteCharacteristicsRequest request = HOME__V1__WRITE_CHARACTERISTICS_REQUEST__INIT;
    request.writes = writes;
    request.n_writes = 1;
    ProtobufCMessage *message;
    homed_status status;
    CHECK_CODE(homed_call(client, "WriteCharacteristics", &request.base,
                          &home__v1__write_characteristics_response__descriptor, 5000, &message, &status),
               HOME__V1__STATUS_CODE__OK, status);
    if (!message) return 0;
    Home__V1__WriteCharacteristicsResponse *response = (Home__V1__WriteCharacteristicsResponse *)message;
    uint64_t seq = 0;
    CHECK(response->n_results == 1);
    if (response->n_results == 1) {
        const Home__V1__WriteResult *result = response->results[0];
        if (item_error) {
            item_error->code = result->code;
            snprintf(item_error->message, sizeof item_error->message, "%s", result->message);
        }
        seq = result->seq;
    }
    protobuf_c_message_free_unpacked(message, NULL);
    return seq;
}

static void hello_names_the_connection_and_the_journal(void) {
    homed_client *client = connect_named("c-test");
    const Home__V1__HelloReply *hello = homed_hello_reply(client);
    CHECK(hello->connection_id > 0);
    CHECK(hello->journal_id && strlen(hello->journal_id) > 0);
    CHECK(hello->max_frame_size == HOMED_DEFAULT_MAX_FRAME_SIZE);
    bool batch = false;
    for (size_t i = 0; i < hello->n_capabilities; i++) batch |= strcmp(hello->capabilities[i], "batch-events") == 0;
    CHECK(batch);
    homed_status status;
    CHECK_CODE(homed_ping(client, 5000, &status), HOME__V1__STATUS_CODE__OK, status);
    homed_close(client);
}

static void another_protocol_version_is_refused(void) {
    homed_client *client = NULL;
    homed_status status;
    homed_options options = {.protocol_version = 99};
    CHECK_CODE(homed_connect(NULL, &options, &client, &status), HOME__V1__STATUS_CODE__FAILED_PRECONDITION, status);
    CHECK(client == NULL);
}

static void get_home_finds_the_demo_lamp(void) {
    homed_client *client = connect_named("c-test");
    ProtobufCMessage *message;
    homed_status status;
    CHECK_CODE(homed_call(client, "GetHome", NULL, &home__v1__get_home_response__descriptor, 5000, &message, &status),
               HOME__V1__STATUS_CODE__OK, status);
    if (message) {
        const Home__V1__GetHomeResponse *home = (Home__V1__GetHomeResponse *)message;
        for (size_t h = 0; h < home->n_homes; h++)
            for (size_t a = 0; a < home->homes[h]->n_accessories; a++) {
                const Home__V1__Accessory *accessory = home->homes[h]->accessories[a];
                if (strcmp(accessory->name, "Lamp") != 0) continue;
                for (size_t s = 0; s < accessory->n_services; s++)
                    for (size_t c = 0; c < accessory->services[s]->n_characteristics; c++)
                        if (strcmp(accessory->services[s]->characteristics[c]->type_name, "Brightness") == 0)
                            brightness_id = accessory->services[s]->characteristics[c]->id;
            }
        protobuf_c_message_free_unpacked(message, NULL);
    }
    CHECK(brightness_id != 0);
    homed_close(client);
    if (!brightness_id) exit(1);
}

static void writes_and_reads_round_trip_and_bad_items_fail_alone(void) {
    homed_client *client = connect_named("c-test");
    homed_status item;
    CHECK(write_brightness(client, 42, &item) > 0);
    CHECK(item.code == 0);
    Home__V1__ReadCharacteristicsRequest read = HOME__V1__READ_CHARACTERISTICS_REQUEST__INIT;
    uint64_t ids[] = {brightness_id, 999999};
    read.characteristic_ids = ids;
    read.n_characteristic_ids = 2;
    ProtobufCMessage *message;
    homed_status status;
    CHECK_CODE(homed_call(client, "ReadCharacteristics", &read.base, &home__v1__read_characteristics_response__descriptor,
                          5000, &message, &status),
               HOME__V1__STATUS_CODE__OK, status);
    if (message) {
        const Home__V1__ReadCharacteristicsResponse *response = (Home__V1__ReadCharacteristicsResponse *)message;
        CHECK(response->n_reads == 2);
        if (response->n_reads == 2) {
            const Home__V1__Value *value = response->reads[0]->value;
            CHECK(value && value->kind_case == HOME__V1__VALUE__KIND_INT_VALUE && value->int_value == 42);
            CHECK(response->reads[1]->code == HOME__V1__STATUS_CODE__NOT_FOUND);
        }
        protobuf_c_message_free_unpacked(message, NULL);
    }
    CHECK(write_brightness(client, 500, &item) == 0);
    CHECK(item.code == HOME__V1__STATUS_CODE__INVALID_ARGUMENT);
    CHECK_CONTAINS(item.message, "500");
    homed_close(client);
}

static void a_call_fails_whole_with_the_daemons_status(void) {
    homed_client *client = connect_named("c-test");
    ProtobufCMessage *message;
    homed_status status;
    CHECK_CODE(homed_call(client, "NoSuchMethod", NULL, &home__v1__get_status_response__descriptor, 5000, &message,
                          &status),
               HOME__V1__STATUS_CODE__UNIMPLEMENTED, status);
    CHECK(message == NULL);
    /* A deadline present and 0 has passed already: refused, nothing done. */
    CHECK_CODE(homed_call(client, "GetStatus", NULL, &home__v1__get_status_response__descriptor, 0, &message, &status),
               HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED, status);
    /* The connection carries on. */
    CHECK_CODE(homed_call(client, "GetStatus", NULL, &home__v1__get_status_response__descriptor, 5000, &message, &status),
               HOME__V1__STATUS_CODE__OK, status);
    if (message) protobuf_c_message_free_unpacked(message, NULL);
    homed_close(client);
}

/* The next message of `stream`, which must come within 5 s. */
static Home__V1__SubscribeResponse *next(homed_stream *stream) {
    ProtobufCMessage *message = NULL;
    homed_status status;
    CHECK_CODE(homed_stream_next(stream, 5000, &message, &status), HOME__V1__STATUS_CODE__OK, status);
    CHECK(message != NULL);
    return (Home__V1__SubscribeResponse *)message;
}

static Home__V1__SubscribeRequest brightness_request(Home__V1__SubscriptionFilter *filter) {
    *filter = (Home__V1__SubscriptionFilter)HOME__V1__SUBSCRIPTION_FILTER__INIT;
    filter->characteristic_ids = &brightness_id;
    filter->n_characteristic_ids = 1;
    Home__V1__SubscribeRequest request = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    request.filter = filter;
    return request;
}

/* Reads the stream until `count` value events came (a message may carry
 * several: batch-events); with a cursor, only the fresh ones count. Returns
 * how many came; their values are in `values`, the last origin's connection
 * in *origin_connection. */
static size_t next_values(homed_stream *stream, homed_cursor *cursor, size_t count, int64_t *values,
                          uint64_t *origin_connection) {
    size_t got = 0;
    for (int tries = 0; tries < 10 && got < count; tries++) {
        Home__V1__SubscribeResponse *response = next(stream);
        if (!response) break;
        unsigned char fresh[64] = {0};
        if (cursor) homed_cursor_accept(cursor, response, fresh);
        for (size_t i = 0; i < response->n_events && got < count; i++) {
            const Home__V1__Event *event = response->events[i];
            if ((cursor && !fresh[i]) || event->body_case != HOME__V1__EVENT__BODY_VALUE) continue;
            values[got++] = event->value->value->int_value;
            if (origin_connection) *origin_connection = event->origin->connection_id;
        }
        protobuf_c_message_free_unpacked(&response->base, NULL);
    }
    return got;
}

static int64_t next_value(homed_stream *stream, homed_cursor *cursor, uint64_t *origin_connection) {
    int64_t value = -1;
    next_values(stream, cursor, 1, &value, origin_connection);
    return value;
}

static void a_subscription_sees_another_connections_write_and_ends_on_cancel(void) {
    homed_client *watcher = connect_named("c-watcher");
    homed_client *writer = connect_named("c-writer");
    Home__V1__SubscriptionFilter filter;
    Home__V1__SubscribeRequest request = brightness_request(&filter);
    request.snapshot = 1;
    homed_stream *stream;
    homed_status status;
    CHECK_CODE(homed_subscribe(watcher, &request, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
    Home__V1__SubscribeResponse *first = next(stream);
    CHECK(first && first->marker && first->marker->kind == HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED);
    if (first) protobuf_c_message_free_unpacked(&first->base, NULL);
    /* The snapshot: Brightness's current value, then its end. */
    bool ended = false;
    size_t snapshot = 0;
    for (int i = 0; i < 5 && !ended; i++) {
        Home__V1__SubscribeResponse *page = next(stream);
        if (!page) break;
        snapshot += page->n_snapshot;
        ended = page->marker && page->marker->kind == HOME__V1__MARKER_KIND__MARKER_SNAPSHOT_END;
        protobuf_c_message_free_unpacked(&page->base, NULL);
    }
    CHECK(ended && snapshot == 1);
    /* A unary call on the same connection while the stream is open. */
    ProtobufCMessage *message;
    CHECK_CODE(homed_call(watcher, "GetStatus", NULL, &home__v1__get_status_response__descriptor, 5000, &message, &status),
               HOME__V1__STATUS_CODE__OK, status);
    if (message) protobuf_c_message_free_unpacked(message, NULL);

    CHECK(write_brightness(writer, 17, NULL) > 0);
    uint64_t origin = 0;
    CHECK(next_value(stream, NULL, &origin) == 17);
    CHECK(origin == homed_hello_reply(writer)->connection_id);

    CHECK_CODE(homed_stream_cancel(stream, &status), HOME__V1__STATUS_CODE__OK, status);
    int code;
    while ((code = homed_stream_next(stream, 5000, &message, &status)) == 0 && message)
        protobuf_c_message_free_unpacked(message, NULL);
    CHECK_CODE(code, HOME__V1__STATUS_CODE__OK, status); /* ended, by the cancel */
    CHECK(homed_stream_ended(stream));
    homed_stream_free(stream);
    homed_close(writer);
    homed_close(watcher);
}

static void a_resumed_subscription_gets_exactly_what_it_missed(void) {
    homed_cursor *cursor = homed_cursor_new();
    homed_client *writer = connect_named("c-writer");
    Home__V1__SubscriptionFilter filter;
    Home__V1__SubscribeRequest request = brightness_request(&filter);

    homed_client *watcher = connect_named("c-watcher");
    homed_stream *stream;
    homed_status status;
    CHECK_CODE(homed_subscribe(watcher, &request, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
    /* Live once the subscribed marker came: a write before it might not be seen. */
    Home__V1__SubscribeResponse *subscribed = next(stream);
    CHECK(subscribed && subscribed->marker && subscribed->marker->kind == HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED);
    if (subscribed) {
        homed_cursor_accept(cursor, subscribed, NULL);
        protobuf_c_message_free_unpacked(&subscribed->base, NULL);
    }
    CHECK(write_brightness(writer, 21, NULL) > 0);
    CHECK(next_value(stream, cursor, NULL) == 21);
    /* Gone with its stream open: freed after the close. */
    homed_close(watcher);
    homed_stream_free(stream);

    CHECK(write_brightness(writer, 22, NULL) > 0);
    CHECK(write_brightness(writer, 23, NULL) > 0);

    watcher = connect_named("c-watcher");
    request = brightness_request(&filter);
    homed_cursor_resume(cursor, &request);
    CHECK(request.since_present_case == HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ);
    CHECK_CODE(homed_subscribe(watcher, &request, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
    int64_t missed[2] = {0};
    CHECK(next_values(stream, cursor, 2, missed, NULL) == 2);
    CHECK(missed[0] == 22 && missed[1] == 23);
    /* Nothing more: the missed events came once. */
    ProtobufCMessage *message = NULL;
    int code = homed_stream_next(stream, 300, &message, &status);
    CHECK(code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED && !homed_stream_ended(stream));
    homed_stream_free(stream);

    /* A resume point of another journal: a resync marker, then a fresh snapshot. */
    request = brightness_request(&filter);
    request.since_present_case = HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ;
    request.since_seq = 1;
    request.journal_id = "not-this-journal";
    CHECK_CODE(homed_subscribe(watcher, &request, &stream, &status), HOME__V1__STATUS_CODE__OK, status);
    bool resync = false;
    for (int i = 0; i < 4 && !resync; i++) {
        Home__V1__SubscribeResponse *response = next(stream);
        if (!response) break;
        if (response->marker && response->marker->kind == HOME__V1__MARKER_KIND__MARKER_RESYNC) {
            resync = true;
            CHECK(response->marker->reason && strlen(response->marker->reason) > 0);
        }
        protobuf_c_message_free_unpacked(&response->base, NULL);
    }
    CHECK(resync);
    homed_stream_free(stream);
    homed_close(watcher);
    homed_close(writer);
    homed_cursor_free(cursor);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    if (!getenv("HOMED_SOCKET")) {
        fprintf(stderr, "test_daemon: set HOMED_SOCKET to a running homed --demo (tests/run.sh does)\n");
        return 2;
    }
    RUN(hello_names_the_connection_and_the_journal);
    RUN(another_protocol_version_is_refused);
    RUN(get_home_finds_the_demo_lamp);
    RUN(writes_and_reads_round_trip_and_bad_items_fail_alone);
    RUN(a_call_fails_whole_with_the_daemons_status);
    RUN(a_subscription_sees_another_connections_write_and_ends_on_cancel);
    RUN(a_resumed_subscription_gets_exactly_what_it_missed);
    FINISH();
}
