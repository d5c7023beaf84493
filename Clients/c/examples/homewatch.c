/*
 * homewatch: prints every change homed publishes as one JSON object per line,
 * in the schema of `homectl watch` when piped (docs/homectl.md, "homectl watch
 * output"), and resumes across daemon restarts with no gap and no repeat.
 *
 *     homewatch [-s SOCKET] [-n COUNT] [--snapshot] [--markers] [-c ID]...
 *
 * An example of libhomed-client: connect, GetHome in pages for the names,
 * Subscribe, read the stream, and on a lost connection reconnect with backoff
 * and resume from a homed_cursor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <homed/client.h>

/* ---- a JSON line ------------------------------------------------------- */

typedef struct line {
    char *text;
    size_t length, capacity;
} line;

static void append(line *out, const char *bytes, size_t count) {
    if (out->length + count + 1 > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 256;
        while (out->length + count + 1 > capacity) capacity *= 2;
        char *grown = realloc(out->text, capacity);
        if (!grown) {
            fprintf(stderr, "homewatch: out of memory\n");
            exit(1);
        }
        out->text = grown;
        out->capacity = capacity;
    }
    memcpy(out->text + out->length, bytes, count);
    out->length += count;
    out->text[out->length] = 0;
}

static void appendf(line *out, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void appendf(line *out, const char *format, ...) {
    char buffer[64];
    va_list arguments;
    va_start(arguments, format);
    int count = vsnprintf(buffer, sizeof buffer, format, arguments);
    va_end(arguments);
    append(out, buffer, (size_t)count);
}

/* A JSON string. Control characters are escaped, DEL and the C1 controls too
 * (a terminal may act on them), as homectl writes them. */
static void json_string(line *out, const char *text) {
    append(out, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            append(out, "\\", 1);
            append(out, (const char *)p, 1);
        } else if (*p == '\n') {
            append(out, "\\n", 2);
        } else if (*p == '\r') {
            append(out, "\\r", 2);
        } else if (*p == '\t') {
            append(out, "\\t", 2);
        } else if (*p < 0x20 || *p == 0x7F) {
            appendf(out, "\\u%04x", *p);
        } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
            appendf(out, "\\u%04x", p[1]);
            p++;
        } else {
            append(out, (const char *)p, 1);
        }
    }
    append(out, "\"", 1);
}

/* The shortest text that reads back as the same double; JSON has no NaN. */
static void json_double(line *out, double value) {
    if (!isfinite(value)) {
        append(out, "null", 4);
        return;
    }
    char buffer[32];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buffer, sizeof buffer, "%.*g", precision, value);
        if (strtod(buffer, NULL) == value) break;
    }
    append(out, buffer, strlen(buffer));
}

static const char base64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void json_base64(line *out, const ProtobufCBinaryData *data) {
    append(out, "\"", 1);
    for (size_t i = 0; i < data->len; i += 3) {
        uint32_t group = (uint32_t)data->data[i] << 16;
        if (i + 1 < data->len) group |= (uint32_t)data->data[i + 1] << 8;
        if (i + 2 < data->len) group |= data->data[i + 2];
        char quad[4] = {base64_digits[group >> 18 & 63], base64_digits[group >> 12 & 63],
                        i + 1 < data->len ? base64_digits[group >> 6 & 63] : '=',
                        i + 2 < data->len ? base64_digits[group & 63] : '='};
        append(out, quad, 4);
    }
    append(out, "\"", 1);
}

static void json_value(line *out, const Home__V1__Value *value) {
    if (!value) {
        append(out, "null", 4);
        return;
    }
    switch (value->kind_case) {
    case HOME__V1__VALUE__KIND_BOOL_VALUE: append(out, value->bool_value ? "true" : "false", value->bool_value ? 4 : 5); break;
    case HOME__V1__VALUE__KIND_INT_VALUE: appendf(out, "%lld", (long long)value->int_value); break;
    case HOME__V1__VALUE__KIND_UINT_VALUE: appendf(out, "%llu", (unsigned long long)value->uint_value); break;
    case HOME__V1__VALUE__KIND_FLOAT_VALUE: json_double(out, value->float_value); break;
    case HOME__V1__VALUE__KIND_STRING_VALUE: json_string(out, value->string_value); break;
    case HOME__V1__VALUE__KIND_DATA_VALUE: json_base64(out, &value->data_value); break;
    default: append(out, "null", 4); break;
    }
}

static void key(line *out, const char *name) {
    append(out, out->length > 1 ? "," : "", out->length > 1 ? 1 : 0);
    json_string(out, name);
    append(out, ":", 1);
}

static void field_uint(line *out, const char *name, uint64_t value) {
    key(out, name);
    appendf(out, "%llu", (unsigned long long)value);
}

static void field_string(line *out, const char *name, const char *value) {
    key(out, name);
    json_string(out, value);
}

/* ISO 8601 UTC with milliseconds: "2026-11-21T20:05:01.123Z". */
static void field_time(line *out, const char *name, int64_t ms) {
    int64_t seconds = ms / 1000, millis = ms % 1000;
    if (millis < 0) {
        seconds -= 1;
        millis += 1000;
    }
    time_t whole = (time_t)seconds;
    struct tm utc;
    char text[48];
    gmtime_r(&whole, &utc);
    size_t length = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf(text + length, sizeof text - length, ".%03dZ", (int)millis);
    field_string(out, name, text);
}

/* ---- names for ids ----------------------------------------------------- */

typedef struct named {
    uint64_t id;
    const void *object;
} named;

typedef struct names {
    Home__V1__GetHomeResponse **pages;
    size_t page_count;
    named *rooms, *accessories, *services, *characteristics, *action_sets, *triggers;
    size_t room_count, accessory_count, service_count, characteristic_count, action_set_count, trigger_count;
    /* The catalog (ListTypes), for the names of enumerated values. */
    Home__V1__ListTypesResponse *types;
} names;

static int by_id(const void *a, const void *b) {
    uint64_t x = ((const named *)a)->id, y = ((const named *)b)->id;
    return x < y ? -1 : x > y;
}

static const void *lookup(const named *table, size_t count, uint64_t id) {
    named probe = {.id = id};
    const named *found = table ? bsearch(&probe, table, count, sizeof *table, by_id) : NULL;
    return found ? found->object : NULL;
}

static void push(named **table, size_t *count, uint64_t id, const void *object) {
    named *grown = realloc(*table, (*count + 1) * sizeof **table);
    if (!grown) {
        fprintf(stderr, "homewatch: out of memory\n");
        exit(1);
    }
    *table = grown;
    (*table)[(*count)++] = (named){id, object};
}

static void names_free(names *n) {
    for (size_t i = 0; i < n->page_count; i++) protobuf_c_message_free_unpacked(&n->pages[i]->base, NULL);
    free(n->pages);
    free(n->rooms);
    free(n->accessories);
    free(n->services);
    free(n->characteristics);
    free(n->action_sets);
    free(n->triggers);
    if (n->types) protobuf_c_message_free_unpacked(&n->types->base, NULL);
    memset(n, 0, sizeof *n);
}

/* Every home, in pages (a large home does not fit one frame), indexed by id. */
static int names_load(homed_client *client, names *n, homed_status *status) {
    names_free(n);
    char *token = "";
    for (;;) {
        Home__V1__GetHomeRequest request = HOME__V1__GET_HOME_REQUEST__INIT;
        request.page_size = 256;
        request.page_token = token;
        ProtobufCMessage *response;
        int code = homed_call(client, "GetHome", &request.base, &home__v1__get_home_response__descriptor, 10000,
                              &response, status);
        if (code) return code;
        Home__V1__GetHomeResponse **grown = realloc(n->pages, (n->page_count + 1) * sizeof *grown);
        if (!grown) exit(1);
        n->pages = grown;
        Home__V1__GetHomeResponse *page = (Home__V1__GetHomeResponse *)response;
        n->pages[n->page_count++] = page;
        for (size_t h = 0; h < page->n_homes; h++) {
            const Home__V1__Home *home = page->homes[h];
            for (size_t r = 0; r < home->n_rooms; r++) push(&n->rooms, &n->room_count, home->rooms[r]->id, home->rooms[r]);
            for (size_t i = 0; i < home->n_action_sets; i++)
                push(&n->action_sets, &n->action_set_count, home->action_sets[i]->id, home->action_sets[i]);
            for (size_t i = 0; i < home->n_triggers; i++)
                push(&n->triggers, &n->trigger_count, home->triggers[i]->id, home->triggers[i]);
            for (size_t a = 0; a < home->n_accessories; a++) {
                const Home__V1__Accessory *accessory = home->accessories[a];
                push(&n->accessories, &n->accessory_count, accessory->id, accessory);
                for (size_t s = 0; s < accessory->n_services; s++) {
                    const Home__V1__AccessoryService *service = accessory->services[s];
                    push(&n->services, &n->service_count, service->id, service);
                    for (size_t c = 0; c < service->n_characteristics; c++)
                        push(&n->characteristics, &n->characteristic_count, service->characteristics[c]->id,
                             service->characteristics[c]);
                }
            }
        }
        token = page->next_page_token;
        if (!token || !*token) break;
    }
    if (n->rooms) qsort(n->rooms, n->room_count, sizeof *n->rooms, by_id);
    if (n->accessories) qsort(n->accessories, n->accessory_count, sizeof *n->accessories, by_id);
    if (n->services) qsort(n->services, n->service_count, sizeof *n->services, by_id);
    if (n->characteristics) qsort(n->characteristics, n->characteristic_count, sizeof *n->characteristics, by_id);
    if (n->action_sets) qsort(n->action_sets, n->action_set_count, sizeof *n->action_sets, by_id);
    if (n->triggers) qsort(n->triggers, n->trigger_count, sizeof *n->triggers, by_id);
    Home__V1__ListTypesRequest types = HOME__V1__LIST_TYPES_REQUEST__INIT;
    ProtobufCMessage *catalog;
    int code = homed_call(client, "ListTypes", &types.base, &home__v1__list_types_response__descriptor, 10000,
                          &catalog, status);
    if (code) return code;
    n->types = (Home__V1__ListTypesResponse *)catalog;
    return 0;
}

/* ---- enumerated values as people say them ------------------------------ */

/* As `homectl get` prints them: where HAP's identifier says something else than a
 * person would (a contact sensor "detects contact" when the door is closed), the
 * person's word; else the catalog's name with its words spaced ("Not charging"). */
static const struct { const char *type; int64_t value; const char *name; } people_names[] = {
    {"ContactSensorState", 0, "Closed"},     {"ContactSensorState", 1, "Open"},
    {"LockCurrentState", 0, "Unlocked"},     {"LockCurrentState", 1, "Locked"},
    {"LockCurrentState", 2, "Jammed"},       {"LockCurrentState", 3, "Unknown"},
    {"LockTargetState", 0, "Unlocked"},      {"LockTargetState", 1, "Locked"},
    {"LeakDetected", 0, "No leak"},          {"LeakDetected", 1, "Leak"},
    {"SmokeDetected", 0, "No smoke"},        {"SmokeDetected", 1, "Smoke"},
    {"CarbonMonoxideDetected", 0, "Normal"}, {"CarbonMonoxideDetected", 1, "CO detected"},
    {"CarbonDioxideDetected", 0, "Normal"},  {"CarbonDioxideDetected", 1, "CO2 detected"},
    {"OccupancyDetected", 0, "Not occupied"}, {"OccupancyDetected", 1, "Occupied"},
    {"StatusLowBattery", 0, "Normal"},       {"StatusLowBattery", 1, "Low"},
};

/* "NotCharging" → "Not charging": a capital starts a word when a lower-case letter
 * is next to it; words after the first are lower-cased unless all capitals. */
static void spaced(char *out, size_t size, const char *identifier) {
    size_t length = 0, n = strlen(identifier);
    for (size_t i = 0; i < n && length + 2 < size; i++) {
        char c = identifier[i];
        bool upper = c >= 'A' && c <= 'Z';
        bool next_lower = i + 1 < n && identifier[i + 1] >= 'a' && identifier[i + 1] <= 'z';
        bool previous_lower = i > 0 && identifier[i - 1] >= 'a' && identifier[i - 1] <= 'z';
        if (upper && i > 0 && (previous_lower || next_lower)) out[length++] = ' ';
        out[length++] = c;
    }
    out[length] = 0;
    /* Lower-case every word but the first, unless it is all capitals ("CO2"). */
    for (size_t start = 0; start < length;) {
        size_t end = start;
        while (end < length && out[end] != ' ') end++;
        bool all_upper = true;
        for (size_t i = start; i < end; i++) all_upper &= !(out[i] >= 'a' && out[i] <= 'z');
        if (start > 0 && !all_upper)
            for (size_t i = start; i < end; i++)
                if (out[i] >= 'A' && out[i] <= 'Z') out[i] = (char)(out[i] - 'A' + 'a');
        start = end + 1;
    }
}

/* Writes "value_name": the enumerated value's name, or null. */
static void value_name_field(line *out, const names *n, uint64_t characteristic_id, const Home__V1__Value *value) {
    const Home__V1__Characteristic *c = lookup(n->characteristics, n->characteristic_count, characteristic_id);
    key(out, "value_name");
    int64_t number;
    if (!c || !c->metadata || c->metadata->n_valid_values == 0 || !value) goto none;
    if (value->kind_case == HOME__V1__VALUE__KIND_INT_VALUE) number = value->int_value;
    else if (value->kind_case == HOME__V1__VALUE__KIND_UINT_VALUE && value->uint_value <= INT64_MAX) number = (int64_t)value->uint_value;
    else goto none;
    for (size_t i = 0; i < sizeof people_names / sizeof *people_names; i++)
        if (people_names[i].value == number && strcmp(people_names[i].type, c->type_name) == 0) {
            json_string(out, people_names[i].name);
            return;
        }
    for (size_t t = 0; n->types && t < n->types->n_characteristic_types; t++) {
        const Home__V1__CharacteristicType *type = n->types->characteristic_types[t];
        if (strcmp(type->uuid, c->type) != 0) continue;
        for (size_t v = 0; v < type->n_valid_values; v++)
            if (type->valid_values[v]->value == number) {
                char name[128];
                spaced(name, sizeof name, type->valid_values[v]->name);
                json_string(out, name);
                return;
            }
    }
none:
    append(out, "null", 4);
}

static void accessory_fields(line *out, const names *n, uint64_t accessory_id) {
    const Home__V1__Accessory *accessory = lookup(n->accessories, n->accessory_count, accessory_id);
    const Home__V1__Room *room = accessory ? lookup(n->rooms, n->room_count, accessory->room_id) : NULL;
    field_uint(out, "home_id", accessory ? accessory->home_id : 0);
    field_uint(out, "room_id", room ? room->id : 0);
    field_string(out, "room", room ? room->name : "");
    field_uint(out, "accessory_id", accessory_id);
    field_string(out, "accessory", accessory ? accessory->name : "");
}

static void characteristic_fields(line *out, const names *n, uint64_t characteristic_id, uint64_t service_id) {
    const Home__V1__AccessoryService *service = lookup(n->services, n->service_count, service_id);
    const Home__V1__Characteristic *characteristic = lookup(n->characteristics, n->characteristic_count, characteristic_id);
    field_uint(out, "service_id", service_id);
    field_string(out, "service", !service ? "" : *service->name ? service->name : service->type_name);
    field_uint(out, "characteristic_id", characteristic_id);
    field_string(out, "characteristic", characteristic ? characteristic->type_name : "");
    field_string(out, "type", characteristic ? characteristic->type : "");
}

/* ---- lines ------------------------------------------------------------- */

static const char *const event_kinds[] = {"unspecified", "value", "reachability", "layout", "primary-home", "action-set", "trigger", "audit"};
static const char *const origin_kinds[] = {"unknown", "client", "provider", "automation", "simulator", "daemon"};
static const char *const layout_actions[] = {"added", "removed", "updated", "moved"};
static const char *const object_kinds[] = {"unspecified", "home", "room", "zone", "accessory", "service",
                                           "characteristic", "service-group", "action-set", "trigger"};
static const char *const marker_kinds[] = {"none", "subscribed", "snapshot-end", "resync", "gap", "heartbeat"};

#define NAME_OF(table, index) ((size_t)(index) < sizeof table / sizeof *table ? table[index] : "unknown")

static void event_line(line *out, const Home__V1__Event *event, const names *n, const char *journal, uint64_t own) {
    out->length = 0;
    append(out, "{", 1);
    field_uint(out, "seq", event->seq);
    field_string(out, "journal", journal);
    field_string(out, "kind", NAME_OF(event_kinds, event->kind));
    field_time(out, "time", event->time_ms);
    switch (event->body_case) {
    case HOME__V1__EVENT__BODY_VALUE:
        accessory_fields(out, n, event->value->accessory_id);
        characteristic_fields(out, n, event->value->characteristic_id, event->value->service_id);
        key(out, "value");
        json_value(out, event->value->value);
        value_name_field(out, n, event->value->characteristic_id, event->value->value);
        field_uint(out, "merged", event->value->merged);
        break;
    case HOME__V1__EVENT__BODY_REACHABILITY:
        accessory_fields(out, n, event->reachability->accessory_id);
        key(out, "reachable");
        append(out, event->reachability->reachable ? "true" : "false", event->reachability->reachable ? 4 : 5);
        break;
    case HOME__V1__EVENT__BODY_LAYOUT:
        field_uint(out, "home_id", event->layout->home_id);
        field_string(out, "action", NAME_OF(layout_actions, event->layout->action));
        field_string(out, "object", NAME_OF(object_kinds, event->layout->object));
        field_uint(out, "object_id", event->layout->object_id);
        field_string(out, "name", event->layout->name);
        field_uint(out, "parent_id", event->layout->parent_id);
        break;
    case HOME__V1__EVENT__BODY_PRIMARY_HOME_ID: field_uint(out, "home_id", event->primary_home_id); break;
    case HOME__V1__EVENT__BODY_ACTION_SET_ID: {
        const Home__V1__ActionSet *scene = lookup(n->action_sets, n->action_set_count, event->action_set_id);
        field_uint(out, "action_set_id", event->action_set_id);
        field_string(out, "action_set", scene ? scene->name : "");
        break;
    }
    case HOME__V1__EVENT__BODY_TRIGGER_ID: {
        const Home__V1__Trigger *trigger = lookup(n->triggers, n->trigger_count, event->trigger_id);
        field_uint(out, "trigger_id", event->trigger_id);
        field_string(out, "trigger", trigger ? trigger->name : "");
        break;
    }
    case HOME__V1__EVENT__BODY_AUDIT:
        field_string(out, "action", event->audit->action);
        field_string(out, "detail", event->audit->detail);
        break;
    default: break;
    }
    const Home__V1__Origin *origin = event->origin;
    bool local = origin && origin->kind == HOME__V1__ORIGIN_KIND__ORIGIN_CLIENT && origin->connection_id == own;
    line inner = {0}; /* an object of its own: key() puts commas by its length */
    append(&inner, "{", 1);
    field_string(&inner, "kind", NAME_OF(origin_kinds, origin ? origin->kind : 0));
    field_uint(&inner, "connection_id", origin ? origin->connection_id : 0);
    field_string(&inner, "name", origin ? origin->name : "");
    if (origin && origin->uid_present_case == HOME__V1__ORIGIN__UID_PRESENT_UID) {
        field_uint(&inner, "uid", origin->uid);
    } else {
        key(&inner, "uid");
        append(&inner, "null", 4);
    }
    key(&inner, "local");
    append(&inner, local ? "true" : "false", local ? 4 : 5);
    append(&inner, "}", 1);
    key(out, "origin");
    append(out, inner.text, inner.length);
    append(out, "}", 1);
    free(inner.text);
}

static void snapshot_line(line *out, const Home__V1__Characteristic *c, const names *n, const char *journal, uint64_t seq) {
    out->length = 0;
    append(out, "{", 1);
    field_uint(out, "seq", seq);
    field_string(out, "journal", journal);
    field_string(out, "kind", "snapshot");
    field_time(out, "time", c->last_updated_ms);
    accessory_fields(out, n, c->accessory_id);
    characteristic_fields(out, n, c->id, c->service_id);
    key(out, "value");
    json_value(out, c->value);
    value_name_field(out, n, c->id, c->value);
    append(out, "}", 1);
}

static void marker_line(line *out, const Home__V1__StreamMarker *marker, const char *journal) {
    out->length = 0;
    append(out, "{", 1);
    field_uint(out, "seq", marker->seq);
    field_string(out, "journal", journal);
    field_string(out, "kind", NAME_OF(marker_kinds, marker->kind));
    if (marker->kind == HOME__V1__MARKER_KIND__MARKER_GAP) {
        field_uint(out, "gap_from", marker->gap_from);
        field_uint(out, "gap_to", marker->gap_to);
    }
    if (marker->reason && *marker->reason) field_string(out, "reason", marker->reason);
    append(out, "}", 1);
}

/* Writes one line and flushes it. A reader that went away ends homewatch
 * with 0, as the end of a pipeline; any other write error with 1. */
static void emit(const line *out) {
    if (fwrite(out->text, 1, out->length, stdout) != out->length || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) {
        if (errno == EPIPE) exit(0);
        fprintf(stderr, "homewatch: writing to stdout failed: %s\n", strerror(errno));
        exit(1);
    }
}

/* ---- the watch --------------------------------------------------------- */

typedef struct watch {
    const char *socket;
    long count; /* events to print before exiting; 0: no end */
    bool snapshot;
    bool markers;
    uint64_t *characteristic_ids;
    size_t n_characteristic_ids;
    long printed;
    homed_cursor *cursor;
    names names;
    /* Snapshot pages wait for their snapshot-end marker, whose sequence number
     * every snapshot line stands at. */
    Home__V1__SubscribeResponse **pending;
    size_t pending_count;
} watch;

static void drop_pending(watch *w) {
    for (size_t i = 0; i < w->pending_count; i++) protobuf_c_message_free_unpacked(&w->pending[i]->base, NULL);
    free(w->pending);
    w->pending = NULL;
    w->pending_count = 0;
}

/* Prints one stream message. Returns true when the message was kept (a
 * snapshot page waiting for its end), false when the caller frees it; exits
 * once the count is reached. */
static bool handle(watch *w, homed_client *client, Home__V1__SubscribeResponse *message, line *out) {
    unsigned char *fresh = calloc(message->n_events ? message->n_events : 1, 1);
    if (!fresh) exit(1);
    homed_cursor_accept(w->cursor, message, fresh);
    const Home__V1__StreamMarker *marker = message->marker;
    if (marker && marker->kind == HOME__V1__MARKER_KIND__MARKER_RESYNC) drop_pending(w); /* a fresh snapshot follows */
    bool kept = false;
    if (marker && marker->kind == HOME__V1__MARKER_KIND__MARKER_SNAPSHOT_END) {
        for (size_t p = 0; p < w->pending_count; p++) {
            const Home__V1__SubscribeResponse *page = w->pending[p];
            for (size_t i = 0; i < page->n_snapshot; i++) {
                snapshot_line(out, page->snapshot[i], &w->names, page->journal_id, marker->seq);
                emit(out);
            }
        }
        for (size_t i = 0; i < message->n_snapshot; i++) {
            snapshot_line(out, message->snapshot[i], &w->names, message->journal_id, marker->seq);
            emit(out);
        }
        drop_pending(w);
    } else if (message->n_snapshot) {
        Home__V1__SubscribeResponse **grown = realloc(w->pending, (w->pending_count + 1) * sizeof *grown);
        if (!grown) exit(1);
        w->pending = grown;
        w->pending[w->pending_count++] = message;
        kept = true;
    }
    if (marker && (w->markers || (marker->kind != HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED &&
                                  marker->kind != HOME__V1__MARKER_KIND__MARKER_HEARTBEAT))) {
        marker_line(out, marker, message->journal_id);
        emit(out);
    }
    uint64_t own = homed_hello_reply(client)->connection_id;
    for (size_t i = 0; i < message->n_events; i++) {
        if (!fresh[i]) continue;
        const Home__V1__Event *event = message->events[i];
        if (event->body_case == HOME__V1__EVENT__BODY_LAYOUT) {
            homed_status ignored;
            names_load(client, &w->names, &ignored); /* a failed reload keeps nothing stale worse than ids */
        }
        event_line(out, event, &w->names, message->journal_id, own);
        emit(out);
        if (w->count && ++w->printed >= w->count) {
            free(fresh);
            exit(0);
        }
    }
    free(fresh);
    return kept;
}

/* One connection's part of the watch. Returns the status that ended it. */
static int watch_once(watch *w, homed_client *client, homed_status *status) {
    int code = names_load(client, &w->names, status);
    if (code) return code;
    Home__V1__SubscriptionFilter filter = HOME__V1__SUBSCRIPTION_FILTER__INIT;
    filter.characteristic_ids = w->characteristic_ids;
    filter.n_characteristic_ids = w->n_characteristic_ids;
    Home__V1__SubscribeRequest request = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    request.filter = &filter;
    request.snapshot = w->snapshot;
    homed_cursor_resume(w->cursor, &request);
    homed_stream *stream;
    code = homed_subscribe(client, &request, &stream, status);
    if (code) return code;
    line out = {0};
    for (;;) {
        ProtobufCMessage *message;
        code = homed_stream_next(stream, HOMED_NO_TIMEOUT, &message, status);
        if (code || !message) break;
        if (!handle(w, client, (Home__V1__SubscribeResponse *)message, &out))
            protobuf_c_message_free_unpacked(message, NULL);
    }
    free(out.text);
    homed_stream_free(stream);
    return code;
}

static void usage(int code) {
    fprintf(code ? stderr : stdout,
            "usage: homewatch [-s SOCKET] [-n COUNT] [--snapshot] [--markers] [-c CHARACTERISTIC_ID]...\n"
            "Prints every change homed publishes as one JSON object per line (the schema of\n"
            "`homectl watch` when piped), resuming across daemon restarts.\n");
    exit(code);
}

int main(int argc, char **argv) {
    watch w = {0};
    static const struct option options[] = {
        {"socket", required_argument, NULL, 's'}, {"count", required_argument, NULL, 'n'},
        {"snapshot", no_argument, NULL, 'S'},     {"markers", no_argument, NULL, 'm'},
        {"characteristic", required_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int option;
    while ((option = getopt_long(argc, argv, "s:n:c:h", options, NULL)) != -1) {
        char *end;
        switch (option) {
        case 's': w.socket = optarg; break;
        case 'n':
            w.count = strtol(optarg, &end, 10);
            if (*end || w.count <= 0) {
                fprintf(stderr, "homewatch: -n takes a count above 0, not \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'S': w.snapshot = true; break;
        case 'm': w.markers = true; break;
        case 'c': {
            unsigned long long id = strtoull(optarg, &end, 10);
            if (*end || !*optarg || id == 0) {
                fprintf(stderr, "homewatch: -c takes a characteristic id, not \"%s\"\n", optarg);
                return 2;
            }
            uint64_t *grown = realloc(w.characteristic_ids, (w.n_characteristic_ids + 1) * sizeof *grown);
            if (!grown) return 1;
            w.characteristic_ids = grown;
            w.characteristic_ids[w.n_characteristic_ids++] = id;
            break;
        }
        case 'h': usage(0); break;
        default: usage(2);
        }
    }
    if (optind < argc) usage(2);
    signal(SIGPIPE, SIG_IGN);
    w.cursor = homed_cursor_new();
    if (!w.cursor) return 1;

    int connections = 0, backoff_ms = 100, code;
    homed_status status;
    for (;;) {
        homed_client *client;
        homed_options connect_options = {.client_name = "homewatch"};
        code = homed_connect(w.socket, &connect_options, &client, &status);
        if (!code) {
            if (connections++ > 0) fprintf(stderr, "homewatch: reconnected to homed; the watch resumes where it stood\n");
            backoff_ms = 100;
            code = watch_once(&w, client, &status);
            homed_close(client);
            if (!code) break; /* the daemon ended the stream */
        }
        /* The daemon going away (a restart) is waited out; anything else ends the watch. */
        if (code != HOME__V1__STATUS_CODE__UNAVAILABLE || connections == 0) break;
        struct timespec pause = {backoff_ms / 1000, (backoff_ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
        backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
    }
    if (code) fprintf(stderr, "homewatch: %s: %s\n", homed_status_name(code), status.message);
    drop_pending(&w);
    names_free(&w.names);
    homed_cursor_free(w.cursor);
    free(w.characteristic_ids);
    return code;
}
