/*
 * The conformance list (Tests/Conformance/scenarios.json; its README says what
 * each step does) run with libhomed-client against a real homed this program
 * starts with the list's daemon arguments. The Swift and Python runners
 * execute the same list.
 *
 *     conformance SCENARIOS.json HOMED-BINARY
 *
 * Prints one line per scenario; exits 1 when any failed, naming the step.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "homed/client.h"

#define WAIT_MS 5000
#define MAX_NAMED 16

/* ---- failing a step ---------------------------------------------------- */

static jmp_buf step_failed;
static char failure[2048];

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(failure, sizeof failure, format, arguments);
    va_end(arguments);
    longjmp(step_failed, 1);
}

static const char *text(const json_t *step, const char *key) {
    const char *value = json_string_value(json_object_get(step, key));
    if (!value) fail("the step has no \"%s\"", key);
    return value;
}

static int code_named(const char *name) {
    const ProtobufCEnumValue *value = protobuf_c_enum_descriptor_get_value_by_name(&home__v1__status_code__descriptor, name);
    if (!value) fail("no status code named %s", name);
    return value->value;
}

static int expected_code(const json_t *step, const char *key) {
    const char *name = json_string_value(json_object_get(step, key));
    return name ? code_named(name) : HOME__V1__STATUS_CODE__OK;
}

/* ---- what a scenario holds, by name ------------------------------------ */

typedef struct stored_value {
    uint64_t id;
    Home__V1__Value value; /* string_value owned */
    bool from_client;
    uint64_t origin_connection;
    int origin_kind;
} stored_value;

typedef struct stream {
    homed_stream *handle;
    homed_client *client;
    homed_cursor *cursor;
    stored_value *values; /* fresh value events not yet expected */
    size_t value_count;
    stored_value *snapshot; /* snapshot characteristics since the last SNAPSHOT_END */
    size_t snapshot_count;
    bool ended;
    int end_code;
    char end_message[1024];
    bool cancelled;
} stream;

typedef struct named {
    char name[64];
    void *thing;
} named;

typedef struct scenario {
    named clients[MAX_NAMED], streams[MAX_NAMED], calls[MAX_NAMED], providers[MAX_NAMED];
} scenario;

static const char *socket_path;

static void **slot(named *table, const char *name, bool create) {
    for (int i = 0; i < MAX_NAMED; i++)
        if (table[i].thing && strcmp(table[i].name, name) == 0) return &table[i].thing;
    if (!create) fail("nothing named \"%s\" in this scenario", name);
    for (int i = 0; i < MAX_NAMED; i++)
        if (!table[i].thing) {
            snprintf(table[i].name, sizeof table[i].name, "%s", name);
            return &table[i].thing;
        }
    fail("too many names in one scenario");
}

static void store(stored_value **list, size_t *count, uint64_t id, const Home__V1__Value *value, const Home__V1__Origin *origin) {
    stored_value *grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) fail("out of memory");
    *list = grown;
    stored_value *entry = &grown[(*count)++];
    memset(entry, 0, sizeof *entry);
    entry->id = id;
    entry->value = (Home__V1__Value)HOME__V1__VALUE__INIT;
    if (value) {
        entry->value = *value;
        entry->value.base = (ProtobufCMessage)PROTOBUF_C_MESSAGE_INIT(&home__v1__value__descriptor);
        if (value->kind_case == HOME__V1__VALUE__KIND_STRING_VALUE) entry->value.string_value = strdup(value->string_value);
        if (value->kind_case == HOME__V1__VALUE__KIND_DATA_VALUE) entry->value.kind_case = HOME__V1__VALUE__KIND__NOT_SET;
    }
    if (origin) {
        entry->origin_kind = origin->kind;
        entry->origin_connection = origin->connection_id;
    }
}

static void drop_values(stored_value *list, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (list[i].value.kind_case == HOME__V1__VALUE__KIND_STRING_VALUE) free(list[i].value.string_value);
    free(list);
}

static void stream_free(stream *s) {
    homed_stream_free(s->handle);
    homed_cursor_free(s->cursor);
    drop_values(s->values, s->value_count);
    drop_values(s->snapshot, s->snapshot_count);
    free(s);
}

static void scenario_free(scenario *sc) {
    for (int i = 0; i < MAX_NAMED; i++) {
        if (sc->streams[i].thing) stream_free(sc->streams[i].thing);
        if (sc->calls[i].thing) homed_stream_free(sc->calls[i].thing);
        if (sc->providers[i].thing) homed_stream_free(sc->providers[i].thing);
    }
    for (int i = 0; i < MAX_NAMED; i++)
        if (sc->clients[i].thing) homed_close(sc->clients[i].thing);
    memset(sc, 0, sizeof *sc);
}

/* ---- values and names -------------------------------------------------- */

/* {"int": 40} and friends as a Value; strings point into the JSON. */
static Home__V1__Value value_of(const json_t *spec) {
    Home__V1__Value value = HOME__V1__VALUE__INIT;
    const char *kind;
    json_t *number;
    if (json_object_size(spec) != 1) fail("a value is one of {\"bool\"|\"int\"|\"uint\"|\"float\"|\"string\": …}");
    json_object_foreach((json_t *)spec, kind, number) {
        if (strcmp(kind, "bool") == 0) {
            value.kind_case = HOME__V1__VALUE__KIND_BOOL_VALUE;
            value.bool_value = json_is_true(number);
        } else if (strcmp(kind, "int") == 0) {
            value.kind_case = HOME__V1__VALUE__KIND_INT_VALUE;
            value.int_value = json_integer_value(number);
        } else if (strcmp(kind, "uint") == 0) {
            value.kind_case = HOME__V1__VALUE__KIND_UINT_VALUE;
            value.uint_value = (uint64_t)json_integer_value(number);
        } else if (strcmp(kind, "float") == 0) {
            value.kind_case = HOME__V1__VALUE__KIND_FLOAT_VALUE;
            value.float_value = json_number_value(number);
        } else if (strcmp(kind, "string") == 0) {
            value.kind_case = HOME__V1__VALUE__KIND_STRING_VALUE;
            value.string_value = (char *)json_string_value(number);
        } else {
            fail("no value kind \"%s\"", kind);
        }
    }
    return value;
}

static bool same_value(const Home__V1__Value *a, const Home__V1__Value *b) {
    if (!a || !b || a->kind_case != b->kind_case) return false;
    switch (a->kind_case) {
    case HOME__V1__VALUE__KIND_BOOL_VALUE: return a->bool_value == b->bool_value;
    case HOME__V1__VALUE__KIND_INT_VALUE: return a->int_value == b->int_value;
    case HOME__V1__VALUE__KIND_UINT_VALUE: return a->uint_value == b->uint_value;
    case HOME__V1__VALUE__KIND_FLOAT_VALUE: return a->float_value == b->float_value;
    case HOME__V1__VALUE__KIND_STRING_VALUE: return strcmp(a->string_value, b->string_value) == 0;
    default: return false;
    }
}

static const char *describe(const Home__V1__Value *value, char *buffer, size_t size) {
    switch (value ? value->kind_case : 0) {
    case HOME__V1__VALUE__KIND_BOOL_VALUE: snprintf(buffer, size, "bool %s", value->bool_value ? "true" : "false"); break;
    case HOME__V1__VALUE__KIND_INT_VALUE: snprintf(buffer, size, "int %lld", (long long)value->int_value); break;
    case HOME__V1__VALUE__KIND_UINT_VALUE: snprintf(buffer, size, "uint %llu", (unsigned long long)value->uint_value); break;
    case HOME__V1__VALUE__KIND_FLOAT_VALUE: snprintf(buffer, size, "float %g", value->float_value); break;
    case HOME__V1__VALUE__KIND_STRING_VALUE: snprintf(buffer, size, "string \"%s\"", value->string_value); break;
    default: snprintf(buffer, size, "no value"); break;
    }
    return buffer;
}

/* A characteristic: a number is its id; "Accessory/Type" is looked up with GetHome. */
static uint64_t resolve(homed_client *client, const json_t *name) {
    if (json_is_integer(name)) return (uint64_t)json_integer_value(name);
    const char *path = json_string_value(name);
    const char *slash = path ? strchr(path, '/') : NULL;
    if (!slash) fail("a characteristic is an id or \"ACCESSORY/TYPE\"");
    ProtobufCMessage *message;
    homed_status status;
    if (homed_call(client, "GetHome", NULL, &home__v1__get_home_response__descriptor, WAIT_MS, &message, &status))
        fail("GetHome: %s: %s", homed_status_name(status.code), status.message);
    const Home__V1__GetHomeResponse *home = (Home__V1__GetHomeResponse *)message;
    uint64_t id = 0;
    size_t accessory_length = (size_t)(slash - path);
    for (size_t h = 0; h < home->n_homes && !id; h++)
        for (size_t a = 0; a < home->homes[h]->n_accessories && !id; a++) {
            const Home__V1__Accessory *accessory = home->homes[h]->accessories[a];
            if (strlen(accessory->name) != accessory_length || strncmp(accessory->name, path, accessory_length)) continue;
            for (size_t s = 0; s < accessory->n_services && !id; s++)
                for (size_t c = 0; c < accessory->services[s]->n_characteristics && !id; c++)
                    if (strcmp(accessory->services[s]->characteristics[c]->type_name, slash + 1) == 0)
                        id = accessory->services[s]->characteristics[c]->id;
        }
    protobuf_c_message_free_unpacked(message, NULL);
    if (!id) fail("no characteristic \"%s\" in the home", path);
    return id;
}

/* ---- checks ------------------------------------------------------------ */

static void check_code(int got, const homed_status *status, int expected, const char *what) {
    if (got != expected)
        fail("%s: %s (%s), expected %s", what, homed_status_name(got), got ? status->message : "",
             homed_status_name(expected));
}

/* One result of a read or write against its expectation. */
static void check_item(size_t index, int code, const char *message, const Home__V1__Value *value, uint64_t seq,
                       const json_t *want) {
    int expected = expected_code(want, "code");
    if (code != expected)
        fail("item %zu: %s (%s), expected %s", index, homed_status_name(code), message, homed_status_name(expected));
    const json_t *value_spec = json_object_get(want, "value");
    if (value_spec) {
        Home__V1__Value wanted = value_of(value_spec);
        char got_text[128], want_text[128];
        if (!same_value(value, &wanted))
            fail("item %zu: %s, expected %s", index, describe(value, got_text, sizeof got_text),
                 describe(&wanted, want_text, sizeof want_text));
    }
    const char *seq_rule = json_string_value(json_object_get(want, "seq"));
    if (seq_rule && strcmp(seq_rule, "nonzero") == 0 && seq == 0) fail("item %zu: seq 0, expected one", index);
    if (seq_rule && strcmp(seq_rule, "zero") == 0 && seq != 0) fail("item %zu: seq %llu, expected 0", index, (unsigned long long)seq);
    const char *part = json_string_value(json_object_get(want, "message_contains"));
    if (part && !strstr(message ? message : "", part)) fail("item %zu: \"%s\" does not contain \"%s\"", index, message, part);
}

/* ---- steps: connections and calls --------------------------------------- */

static homed_client *client_named(scenario *sc, const json_t *step) {
    return *slot(sc->clients, text(step, "client"), false);
}

static void op_connect(scenario *sc, const json_t *step) {
    char name[96];
    snprintf(name, sizeof name, "conformance-%s", text(step, "client"));
    homed_options options = {
        .client_name = name,
        .protocol_version = (uint32_t)json_integer_value(json_object_get(step, "protocol_version")),
        .max_frame_size = (uint32_t)json_integer_value(json_object_get(step, "request_max_frame_size")),
    };
    homed_client *client = NULL;
    homed_status status;
    int code = homed_connect(socket_path, &options, &client, &status);
    check_code(code, &status, expected_code(step, "expect"), "connect");
    if (code) return;
    *slot(sc->clients, text(step, "client"), true) = client;
    const Home__V1__HelloReply *hello = homed_hello_reply(client);
    if (!hello->connection_id || !*hello->journal_id) fail("the hello reply has no connection id or journal id");
    bool batch = false;
    for (size_t i = 0; i < hello->n_capabilities; i++) batch |= strcmp(hello->capabilities[i], "batch-events") == 0;
    if (!batch) fail("the hello reply does not list batch-events");
    const json_t *size = json_object_get(step, "max_frame_size");
    if (size && hello->max_frame_size != (uint32_t)json_integer_value(size))
        fail("max_frame_size %u, expected %lld", hello->max_frame_size, (long long)json_integer_value(size));
}

static void op_disconnect(scenario *sc, const json_t *step) {
    void **client = slot(sc->clients, text(step, "client"), false);
    homed_close(*client);
    *client = NULL;
}

static int timeout_of(const json_t *step) {
    const json_t *timeout = json_object_get(step, "timeout_ms");
    return timeout ? (int)json_integer_value(timeout) : HOMED_NO_TIMEOUT;
}

static void op_call(scenario *sc, const json_t *step) {
    ProtobufCMessage *response = NULL;
    homed_status status;
    /* The response is not looked at: GetStatus's type reads any empty answer too. */
    int code = homed_call(client_named(sc, step), text(step, "method"), NULL, &home__v1__get_status_response__descriptor,
                          timeout_of(step), &response, &status);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    check_code(code, &status, expected_code(step, "expect"), text(step, "method"));
}

static void op_read(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    const json_t *names = json_object_get(step, "ids");
    uint64_t ids[32];
    size_t count = json_array_size(names);
    if (count > 32) fail("too many ids");
    for (size_t i = 0; i < count; i++) ids[i] = resolve(client, json_array_get(names, i));
    Home__V1__ReadCharacteristicsRequest request = HOME__V1__READ_CHARACTERISTICS_REQUEST__INIT;
    request.characteristic_ids = ids;
    request.n_characteristic_ids = count;
    ProtobufCMessage *message;
    homed_status status;
    int code = homed_call(client, "ReadCharacteristics", &request.base, &home__v1__read_characteristics_response__descriptor,
                          WAIT_MS, &message, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "read");
    /* Checked on copies, so the response is freed before a failure jumps away. */
    Home__V1__ReadCharacteristicsResponse *response = (Home__V1__ReadCharacteristicsResponse *)message;
    size_t results = response->n_reads;
    struct { int code; char message[512]; bool has_value; Home__V1__Value value; char text[512]; } reads[32];
    for (size_t i = 0; i < results && i < 32; i++) {
        const Home__V1__CharacteristicRead *read = response->reads[i];
        reads[i].code = read->code;
        snprintf(reads[i].message, sizeof reads[i].message, "%s", read->message);
        reads[i].has_value = read->value != NULL;
        if (read->value) reads[i].value = *read->value;
        if (read->value && read->value->kind_case == HOME__V1__VALUE__KIND_STRING_VALUE) {
            snprintf(reads[i].text, sizeof reads[i].text, "%s", read->value->string_value);
            reads[i].value.string_value = reads[i].text;
        }
    }
    protobuf_c_message_free_unpacked(message, NULL);
    const json_t *items = json_object_get(step, "items");
    if (results != json_array_size(items)) fail("%zu results, expected %zu", results, json_array_size(items));
    for (size_t i = 0; i < results && i < 32; i++)
        check_item(i + 1, reads[i].code, reads[i].message, reads[i].has_value ? &reads[i].value : NULL, 0,
                   json_array_get(items, i));
}

/* A WriteCharacteristicsRequest from the step, in storage of its own. */
typedef struct write_request {
    Home__V1__WriteCharacteristicsRequest request;
    Home__V1__CharacteristicWrite writes[16];
    Home__V1__CharacteristicWrite *pointers[16];
    Home__V1__Value values[16];
} write_request;

static void build_write(homed_client *client, const json_t *step, write_request *w) {
    const json_t *writes = json_object_get(step, "writes");
    size_t count = json_array_size(writes);
    if (count > 16) fail("too many writes");
    w->request = (Home__V1__WriteCharacteristicsRequest)HOME__V1__WRITE_CHARACTERISTICS_REQUEST__INIT;
    w->request.atomic = json_is_true(json_object_get(step, "atomic"));
    w->request.validate_only = json_is_true(json_object_get(step, "validate_only"));
    for (size_t i = 0; i < count; i++) {
        const json_t *pair = json_array_get(writes, i);
        w->values[i] = value_of(json_array_get(pair, 1));
        w->writes[i] = (Home__V1__CharacteristicWrite)HOME__V1__CHARACTERISTIC_WRITE__INIT;
        w->writes[i].characteristic_id = resolve(client, json_array_get(pair, 0));
        w->writes[i].value = &w->values[i];
        w->pointers[i] = &w->writes[i];
    }
    w->request.writes = w->pointers;
    w->request.n_writes = count;
}

static void finish_write(ProtobufCMessage *message, const json_t *step) {
    Home__V1__WriteCharacteristicsResponse *response = (Home__V1__WriteCharacteristicsResponse *)message;
    /* Checked on a copy of what matters, so the response is freed before a failure jumps. */
    size_t count = response->n_results;
    struct { int code; char message[512]; uint64_t seq; } results[16];
    for (size_t i = 0; i < count && i < 16; i++) {
        results[i].code = response->results[i]->code;
        results[i].seq = response->results[i]->seq;
        snprintf(results[i].message, sizeof results[i].message, "%s", response->results[i]->message);
    }
    protobuf_c_message_free_unpacked(message, NULL);
    const json_t *items = json_object_get(step, "items");
    if (count != json_array_size(items)) fail("%zu results, expected %zu", count, json_array_size(items));
    for (size_t i = 0; i < count && i < 16; i++)
        check_item(i + 1, results[i].code, results[i].message, NULL, results[i].seq, json_array_get(items, i));
}

static void op_write(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    write_request w;
    build_write(client, step, &w);
    ProtobufCMessage *message;
    homed_status status;
    int code = homed_call(client, "WriteCharacteristics", &w.request.base,
                          &home__v1__write_characteristics_response__descriptor, WAIT_MS, &message, &status);
    if (message && code) protobuf_c_message_free_unpacked(message, NULL);
    check_code(code, &status, expected_code(step, "expect"), "write");
    if (!code) finish_write(message, step);
}

/* A write opened as a stream: homed_stream_open returns once it is sent, and
 * its one response comes by homed_stream_next, after the provider answered. */
static void op_write_begin(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    write_request w;
    build_write(client, step, &w);
    homed_stream *call;
    homed_status status;
    int code = homed_stream_open(client, "WriteCharacteristics", &w.request.base,
                                 &home__v1__write_characteristics_response__descriptor, 10000, &call, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "write");
    *slot(sc->calls, text(step, "call"), true) = call;
}

static void op_write_end(scenario *sc, const json_t *step) {
    void **call = slot(sc->calls, text(step, "call"), false);
    ProtobufCMessage *message;
    homed_status status;
    int code = homed_stream_next(*call, 10000, &message, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "write");
    if (!message) fail("the write ended without a response");
    ProtobufCMessage *extra = NULL;
    code = homed_stream_next(*call, WAIT_MS, &extra, &status);
    if (extra) protobuf_c_message_free_unpacked(extra, NULL);
    homed_stream_free(*call);
    *call = NULL;
    if (code || extra) {
        protobuf_c_message_free_unpacked(message, NULL);
        fail("the write did not end with OK after its response: %s %s", homed_status_name(code), status.message);
    }
    finish_write(message, step);
}

static void op_oversized_request(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    size_t count = homed_hello_reply(client)->max_frame_size / 3 + 1;
    uint64_t *ids = malloc(count * sizeof *ids);
    for (size_t i = 0; i < count; i++) ids[i] = 1000000 + i;
    Home__V1__ReadCharacteristicsRequest request = HOME__V1__READ_CHARACTERISTICS_REQUEST__INIT;
    request.characteristic_ids = ids;
    request.n_characteristic_ids = count;
    ProtobufCMessage *message = NULL;
    homed_status status;
    int code = homed_call(client, "ReadCharacteristics", &request.base, &home__v1__read_characteristics_response__descriptor,
                          WAIT_MS, &message, &status);
    free(ids);
    if (message) protobuf_c_message_free_unpacked(message, NULL);
    check_code(code, &status, expected_code(step, "expect"), "oversized request");
}

/* ---- steps: streams ----------------------------------------------------- */

static stream *stream_named(scenario *sc, const json_t *step) {
    return *slot(sc->streams, text(step, "stream"), false);
}

static void op_subscribe(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    const json_t *names = json_object_get(step, "ids");
    uint64_t ids[32];
    size_t count = json_array_size(names);
    for (size_t i = 0; i < count && i < 32; i++) ids[i] = resolve(client, json_array_get(names, i));
    Home__V1__SubscriptionFilter filter = HOME__V1__SUBSCRIPTION_FILTER__INIT;
    filter.characteristic_ids = ids;
    filter.n_characteristic_ids = count;
    Home__V1__SubscribeRequest request = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    request.filter = &filter;
    request.snapshot = json_is_true(json_object_get(step, "snapshot"));
    if (json_object_get(step, "since_seq")) {
        request.since_present_case = HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ;
        request.since_seq = (uint64_t)json_integer_value(json_object_get(step, "since_seq"));
        request.journal_id = (char *)text(step, "journal_id");
    }
    stream *s = calloc(1, sizeof *s);
    s->client = client;
    const char *from = json_string_value(json_object_get(step, "resume_from"));
    if (from) {
        /* The cursor moves to the new stream: it stands where the old one did. */
        stream *old = *slot(sc->streams, from, false);
        s->cursor = old->cursor;
        old->cursor = homed_cursor_new();
        homed_cursor_resume(s->cursor, &request);
    } else {
        s->cursor = homed_cursor_new();
    }
    *slot(sc->streams, text(step, "stream"), true) = s;
    homed_status status;
    int code = homed_stream_open(client, "Subscribe", &request.base, &home__v1__subscribe_response__descriptor,
                                 timeout_of(step), &s->handle, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "subscribe");
}

/* Reads one message into the stream's lists. Returns its marker kind (0 for
 * none), -1 when the stream ended, -2 when nothing came within `wait_ms`. */
static int read_stream(stream *s, int wait_ms, char *reason, size_t reason_size) {
    if (s->ended) return -1;
    ProtobufCMessage *message;
    homed_status status;
    int code = homed_stream_next(s->handle, wait_ms, &message, &status);
    if (code == HOME__V1__STATUS_CODE__DEADLINE_EXCEEDED && !homed_stream_ended(s->handle)) return -2;
    if (code || !message) {
        s->ended = true;
        /* A stream the client cancelled ends with OK here: that is its CANCELLED. */
        s->end_code = !code && s->cancelled ? HOME__V1__STATUS_CODE__CANCELLED : code;
        snprintf(s->end_message, sizeof s->end_message, "%s", code ? status.message : "");
        return -1;
    }
    Home__V1__SubscribeResponse *response = (Home__V1__SubscribeResponse *)message;
    unsigned char fresh[256] = {0};
    if (response->n_events > 256) fail("a batch of %zu events is more than this runner holds", response->n_events);
    homed_cursor_accept(s->cursor, response, fresh);
    for (size_t i = 0; i < response->n_events; i++) {
        const Home__V1__Event *event = response->events[i];
        if (fresh[i] && event->body_case == HOME__V1__EVENT__BODY_VALUE)
            store(&s->values, &s->value_count, event->value->characteristic_id, event->value->value, event->origin);
    }
    for (size_t i = 0; i < response->n_snapshot; i++)
        store(&s->snapshot, &s->snapshot_count, response->snapshot[i]->id, response->snapshot[i]->value, NULL);
    int kind = response->marker ? (int)response->marker->kind : 0;
    if (reason) snprintf(reason, reason_size, "%s", response->marker ? response->marker->reason : "");
    protobuf_c_message_free_unpacked(message, NULL);
    return kind;
}

static void op_expect_marker(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    const ProtobufCEnumValue *wanted =
        protobuf_c_enum_descriptor_get_value_by_name(&home__v1__marker_kind__descriptor, text(step, "kind"));
    if (!wanted) fail("no marker kind %s", text(step, "kind"));
    char reason[512];
    int kind;
    while ((kind = read_stream(s, WAIT_MS, reason, sizeof reason)) == 0) {}
    if (kind == -1) fail("the stream ended (%s: %s) before a %s marker", homed_status_name(s->end_code), s->end_message, wanted->name);
    if (kind == -2) fail("no %s marker within %d ms", wanted->name, WAIT_MS);
    if (kind != wanted->value) {
        const ProtobufCEnumValue *got = protobuf_c_enum_descriptor_get_value(&home__v1__marker_kind__descriptor, kind);
        fail("marker %s, expected %s", got ? got->name : "?", wanted->name);
    }
    if (json_is_true(json_object_get(step, "reason")) && !*reason) fail("the %s marker has no reason", wanted->name);
    if (kind == HOME__V1__MARKER_KIND__MARKER_RESYNC) { /* a fresh snapshot follows */
        drop_values(s->snapshot, s->snapshot_count);
        s->snapshot = NULL;
        s->snapshot_count = 0;
    }
}

/* Whether `got` is exactly `expected` ([characteristic, value] pairs); if not,
 * `why` says how. Fails only when a name cannot be resolved. */
static bool values_match(const stored_value *got, size_t got_count, const json_t *expected, homed_client *client,
                         const char *what, char *why, size_t why_size) {
    if (got_count != json_array_size(expected)) {
        snprintf(why, why_size, "%s: %zu values, expected %zu", what, got_count, json_array_size(expected));
        return false;
    }
    for (size_t i = 0; i < got_count; i++) {
        const json_t *pair = json_array_get(expected, i);
        uint64_t id = resolve(client, json_array_get(pair, 0));
        Home__V1__Value value = value_of(json_array_get(pair, 1));
        char got_text[128], want_text[128];
        if (got[i].id != id || !same_value(&got[i].value, &value)) {
            snprintf(why, why_size, "%s %zu: characteristic %llu = %s, expected %llu = %s", what, i + 1,
                     (unsigned long long)got[i].id, describe(&got[i].value, got_text, sizeof got_text),
                     (unsigned long long)id, describe(&value, want_text, sizeof want_text));
            return false;
        }
    }
    return true;
}

/* values_match, then frees `got` (taken over), then fails if they differed. */
static void check_and_drop(stored_value *got, size_t got_count, const json_t *expected, homed_client *client,
                           const char *what) {
    char why[1024];
    bool match = values_match(got, got_count, expected, client, what, why, sizeof why);
    drop_values(got, got_count);
    if (!match) fail("%s", why);
}

static void op_expect_snapshot(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    int kind;
    while ((kind = read_stream(s, WAIT_MS, NULL, 0)) >= 0 && kind != HOME__V1__MARKER_KIND__MARKER_SNAPSHOT_END) {}
    if (kind < 0) fail("no SNAPSHOT_END (%s)", kind == -1 ? "the stream ended" : "nothing came in time");
    stored_value *snapshot = s->snapshot;
    size_t count = s->snapshot_count;
    s->snapshot = NULL;
    s->snapshot_count = 0;
    check_and_drop(snapshot, count, json_object_get(step, "values"), s->client, "snapshot");
}

static void op_expect_values(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    size_t wanted = json_array_size(json_object_get(step, "values"));
    while (s->value_count < wanted) {
        int kind = read_stream(s, WAIT_MS, NULL, 0);
        if (kind == -1) fail("the stream ended (%s) with %zu values", homed_status_name(s->end_code), s->value_count);
        if (kind == -2) fail("%zu values within %d ms, expected %zu", s->value_count, WAIT_MS, wanted);
    }
    char why[1024];
    if (!values_match(s->values, wanted, json_object_get(step, "values"), s->client, "value", why, sizeof why))
        fail("%s", why); /* the values stay the stream's, freed with it */
    const char *origin = json_string_value(json_object_get(step, "origin"));
    if (origin) {
        homed_client *by = *slot(sc->clients, origin, false);
        for (size_t i = 0; i < wanted; i++)
            if (s->values[i].origin_kind != HOME__V1__ORIGIN_KIND__ORIGIN_CLIENT ||
                s->values[i].origin_connection != homed_hello_reply(by)->connection_id)
                fail("value %zu: origin connection %llu, expected %s's", i + 1,
                     (unsigned long long)s->values[i].origin_connection, origin);
    }
    for (size_t i = 0; i < wanted; i++)
        if (s->values[i].value.kind_case == HOME__V1__VALUE__KIND_STRING_VALUE) free(s->values[i].value.string_value);
    memmove(s->values, s->values + wanted, (s->value_count - wanted) * sizeof *s->values);
    s->value_count -= wanted;
}

static void op_expect_quiet(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    read_stream(s, (int)json_integer_value(json_object_get(step, "ms")), NULL, 0);
    if (s->value_count) fail("%zu unexpected value events", s->value_count);
}

static void op_cancel(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    s->cancelled = true;
    homed_status status;
    check_code(homed_stream_cancel(s->handle, &status), &status, HOME__V1__STATUS_CODE__OK, "cancel");
}

static void op_expect_end(scenario *sc, const json_t *step) {
    stream *s = stream_named(sc, step);
    for (int reads = 0; !s->ended && reads < 100; reads++)
        if (read_stream(s, WAIT_MS, NULL, 0) == -2) fail("the stream did not end within %d ms", WAIT_MS);
    int expected = expected_code(step, "code");
    if (s->end_code != expected)
        fail("the stream ended with %s (%s), expected %s", homed_status_name(s->end_code), s->end_message,
             homed_status_name(expected));
}

/* ---- steps: providers -------------------------------------------------- */

static Home__V1__ProviderCommand *next_command(homed_stream *commands) {
    ProtobufCMessage *message;
    homed_status status;
    int code = homed_stream_next(commands, WAIT_MS, &message, &status);
    if (code || !message) fail("the provider's stream: %s: %s", homed_status_name(code), code ? status.message : "ended");
    return (Home__V1__ProviderCommand *)message;
}

static void op_provider_open(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    Home__V1__OpenProviderRequest request = HOME__V1__OPEN_PROVIDER_REQUEST__INIT;
    request.provider_id = (char *)text(step, "provider_id");
    homed_stream *commands;
    homed_status status;
    int code = homed_stream_open(client, "OpenProvider", &request.base, &home__v1__provider_command__descriptor,
                                 HOMED_NO_TIMEOUT, &commands, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "OpenProvider");
    *slot(sc->providers, text(step, "client"), true) = commands;
    Home__V1__ProviderCommand *command = next_command(commands);
    bool opened = command->command_case == HOME__V1__PROVIDER_COMMAND__COMMAND_OPENED &&
                  strcmp(command->opened->provider_id, request.provider_id) == 0 &&
                  command->opened->n_known_keys == json_array_size(json_object_get(step, "known_keys"));
    protobuf_c_message_free_unpacked(&command->base, NULL);
    if (!opened) fail("the first command is not `opened` for %s with its known keys", request.provider_id);
}

static void op_provider_register(scenario *sc, const json_t *step) {
    const json_t *accessories = json_object_get(step, "accessories");
    size_t count = json_array_size(accessories);
    Home__V1__ProvidedAccessory accessory[4], *accessory_pointers[4];
    Home__V1__ProvidedService service[4][4], *service_pointers[4][4];
    Home__V1__ProvidedCharacteristic characteristic[4][4][8], *characteristic_pointers[4][4][8];
    Home__V1__Value values[4][4][8];
    if (count > 4) fail("at most 4 accessories per registration here");
    for (size_t a = 0; a < count; a++) {
        const json_t *spec = json_array_get(accessories, a);
        accessory[a] = (Home__V1__ProvidedAccessory)HOME__V1__PROVIDED_ACCESSORY__INIT;
        accessory[a].key = (char *)text(spec, "key");
        accessory[a].name = (char *)text(spec, "name");
        const ProtobufCEnumValue *category =
            protobuf_c_enum_descriptor_get_value_by_name(&home__v1__accessory_category__descriptor, text(spec, "category"));
        if (!category) fail("no accessory category %s", text(spec, "category"));
        accessory[a].category = category->value;
        const json_t *services = json_object_get(spec, "services");
        for (size_t s = 0; s < json_array_size(services) && s < 4; s++) {
            const json_t *service_spec = json_array_get(services, s);
            service[a][s] = (Home__V1__ProvidedService)HOME__V1__PROVIDED_SERVICE__INIT;
            service[a][s].type = (char *)text(service_spec, "type");
            const json_t *characteristics = json_object_get(service_spec, "characteristics");
            for (size_t c = 0; c < json_array_size(characteristics) && c < 8; c++) {
                const json_t *characteristic_spec = json_array_get(characteristics, c);
                Home__V1__ProvidedCharacteristic *item = &characteristic[a][s][c];
                *item = (Home__V1__ProvidedCharacteristic)HOME__V1__PROVIDED_CHARACTERISTIC__INIT;
                item->type = (char *)text(characteristic_spec, "type");
                if (json_object_get(characteristic_spec, "value")) {
                    values[a][s][c] = value_of(json_object_get(characteristic_spec, "value"));
                    item->value = &values[a][s][c];
                }
                characteristic_pointers[a][s][c] = item;
            }
            service[a][s].characteristics = characteristic_pointers[a][s];
            service[a][s].n_characteristics = json_array_size(characteristics);
            service_pointers[a][s] = &service[a][s];
        }
        accessory[a].services = service_pointers[a];
        accessory[a].n_services = json_array_size(services);
        accessory_pointers[a] = &accessory[a];
    }
    Home__V1__RegisterAccessoriesRequest request = HOME__V1__REGISTER_ACCESSORIES_REQUEST__INIT;
    request.accessories = accessory_pointers;
    request.n_accessories = count;
    ProtobufCMessage *response = NULL;
    homed_status status;
    int code = homed_call(client_named(sc, step), "RegisterAccessories", &request.base,
                          &home__v1__register_accessories_response__descriptor, WAIT_MS, &response, &status);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    check_code(code, &status, expected_code(step, "expect"), "RegisterAccessories");
}

static void answer(homed_client *client, const Home__V1__CommandAnswer *answer_message) {
    ProtobufCMessage *response;
    homed_status status;
    int code = homed_call(client, "AnswerCommand", &answer_message->base, &home__v1__answer_command_response__descriptor,
                          WAIT_MS, &response, &status);
    check_code(code, &status, HOME__V1__STATUS_CODE__OK, "AnswerCommand");
    bool accepted = ((Home__V1__AnswerCommandResponse *)response)->accepted;
    protobuf_c_message_free_unpacked(response, NULL);
    if (!accepted) fail("the daemon did not accept the answer");
}

static void op_provider_expect_write(scenario *sc, const json_t *step) {
    homed_client *client = client_named(sc, step);
    homed_stream *commands = *slot(sc->providers, text(step, "client"), false);
    Home__V1__ProviderCommand *command;
    for (;;) {
        command = next_command(commands);
        if (command->command_case != HOME__V1__PROVIDER_COMMAND__COMMAND_PING) break;
        Home__V1__CommandAnswer pong = HOME__V1__COMMAND_ANSWER__INIT;
        pong.request_id = command->request_id;
        protobuf_c_message_free_unpacked(&command->base, NULL);
        answer(client, &pong);
    }
    if (command->command_case != HOME__V1__PROVIDER_COMMAND__COMMAND_WRITE) {
        protobuf_c_message_free_unpacked(&command->base, NULL);
        fail("a command other than a write came");
    }
    stored_value *writes = NULL;
    size_t count = 0;
    for (size_t i = 0; i < command->write->n_writes; i++)
        store(&writes, &count, command->write->writes[i]->characteristic_id, command->write->writes[i]->value, NULL);
    uint64_t request_id = command->request_id;
    protobuf_c_message_free_unpacked(&command->base, NULL);

    Home__V1__CommandAnswer reply = HOME__V1__COMMAND_ANSWER__INIT;
    reply.request_id = request_id;
    Home__V1__WriteResult results[16], *result_pointers[16];
    const char *code_name = text(step, "answer");
    if (strcmp(code_name, "OK") == 0) {
        for (size_t i = 0; i < count && i < 16; i++) {
            results[i] = (Home__V1__WriteResult)HOME__V1__WRITE_RESULT__INIT;
            results[i].characteristic_id = writes[i].id;
            result_pointers[i] = &results[i];
        }
        reply.writes = result_pointers;
        reply.n_writes = count < 16 ? count : 16;
    } else {
        reply.code = code_named(code_name);
        reply.message = (char *)(json_string_value(json_object_get(step, "message")) ? json_string_value(json_object_get(step, "message")) : "");
    }
    check_and_drop(writes, count, json_object_get(step, "writes"), client, "write sent to the provider");
    answer(client, &reply);
}

/* ---- running ------------------------------------------------------------ */

typedef void (*operation)(scenario *, const json_t *);
static const struct { const char *name; operation run; } operations[] = {
    {"connect", op_connect}, {"disconnect", op_disconnect}, {"call", op_call}, {"read", op_read},
    {"write", op_write}, {"write_begin", op_write_begin}, {"write_end", op_write_end},
    {"oversized_request", op_oversized_request}, {"subscribe", op_subscribe}, {"expect_marker", op_expect_marker},
    {"expect_snapshot", op_expect_snapshot}, {"expect_values", op_expect_values}, {"expect_quiet", op_expect_quiet},
    {"cancel", op_cancel}, {"expect_end", op_expect_end}, {"provider_open", op_provider_open},
    {"provider_register", op_provider_register}, {"provider_expect_write", op_provider_expect_write},
};

static bool run_scenario(const json_t *definition) {
    scenario sc = {0};
    const json_t *steps = json_object_get(definition, "steps");
    const char *name = json_string_value(json_object_get(definition, "name"));
    bool passed = true;
    for (size_t i = 0; i < json_array_size(steps) && passed; i++) {
        const json_t *step = json_array_get(steps, i);
        const char *op = json_string_value(json_object_get(step, "op"));
        if (setjmp(step_failed) != 0) {
            fprintf(stderr, "%s, step %zu (%s): %s\n", name, i + 1, op ? op : "?", failure);
            passed = false;
            break;
        }
        size_t o = 0;
        while (o < sizeof operations / sizeof *operations && strcmp(operations[o].name, op ? op : "")) o++;
        if (o == sizeof operations / sizeof *operations) fail("this runner has no step \"%s\"", op ? op : "");
        operations[o].run(&sc, step);
    }
    scenario_free(&sc);
    printf("%s %s\n", passed ? "ok  " : "FAIL", name);
    fflush(stdout);
    return passed;
}

/* Starts homed with the list's arguments on a socket of its own; waits until it answers. */
static pid_t start_daemon(const char *binary, const json_t *arguments, const char *path) {
    size_t count = json_array_size(arguments);
    char **argv = calloc(count + 4, sizeof *argv);
    argv[0] = (char *)binary;
    for (size_t i = 0; i < count; i++) argv[i + 1] = (char *)json_string_value(json_array_get(arguments, i));
    argv[count + 1] = "--socket";
    argv[count + 2] = (char *)path;
    char log[160];
    snprintf(log, sizeof log, "%s.log", path);
    pid_t pid = fork();
    if (pid == 0) {
        /* The daemon goes with this runner, even one that crashes. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        unsetenv("HOMED_SOCKET");
        /* Its log goes to a file beside the socket, printed if a scenario fails. */
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(126);
        execv(binary, argv);
        perror(binary);
        _exit(127);
    }
    free(argv);
    for (int tries = 0; tries < 200; tries++) {
        homed_client *client;
        if (homed_connect(path, NULL, &client, NULL) == 0) {
            homed_close(client);
            return pid;
        }
        int exit_status;
        if (waitpid(pid, &exit_status, WNOHANG) == pid) {
            fprintf(stderr, "conformance: homed exited before listening on %s\n", path);
            exit(1);
        }
        usleep(50000);
    }
    kill(pid, SIGKILL);
    fprintf(stderr, "conformance: homed did not listen on %s within 10 s\n", path);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: conformance SCENARIOS.json HOMED-BINARY\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    json_error_t error;
    json_t *list = json_load_file(argv[1], 0, &error);
    if (!list) {
        fprintf(stderr, "conformance: %s:%d: %s\n", argv[1], error.line, error.text);
        return 2;
    }
    char directory[] = "/tmp/homed-conformance-XXXXXX";
    if (!mkdtemp(directory)) return 1;
    char path[128];
    snprintf(path, sizeof path, "%s/homed.sock", directory);
    socket_path = path;
    pid_t daemon = start_daemon(argv[2], json_object_get(list, "daemon"), path);

    const json_t *scenarios = json_object_get(list, "scenarios");
    size_t failed = 0;
    for (size_t i = 0; i < json_array_size(scenarios); i++) failed += !run_scenario(json_array_get(scenarios, i));

    kill(daemon, SIGTERM);
    waitpid(daemon, NULL, 0);
    char log[160];
    snprintf(log, sizeof log, "%s.log", path);
    if (failed) {
        fprintf(stderr, "conformance: homed's log:\n");
        FILE *file = fopen(log, "r");
        char line[1024];
        while (file && fgets(line, sizeof line, file)) fputs(line, stderr);
        if (file) fclose(file);
    }
    unlink(log);
    unlink(path);
    rmdir(directory);
    if (failed) fprintf(stderr, "conformance: %zu of %zu scenarios failed\n", failed, json_array_size(scenarios));
    json_decref(list);
    return failed ? 1 : 0;
}
