/*
 * Where a subscription stands, for resuming it with exactly what was missed:
 * the rule of docs/notifications.md ("Resuming a stream"), as the Swift
 * StreamCursor and the Python homed.StreamCursor keep it.
 *
 * The resume point is the highest sequence number received, unless the last
 * message carried resume_after (a subscription with min_interval_ms holds a
 * value back below events it already sent). A resume from there replays
 * events already delivered, and older values of characteristics whose later
 * value was delivered; the cursor remembers both, above the resume point only,
 * and drops them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homed/client.h"

typedef struct latest_value {
    uint64_t characteristic_id;
    uint64_t seq;
} latest_value;

struct homed_cursor {
    char *journal_id;
    bool has_resume;
    uint64_t resume_seq;
    bool has_highest;
    uint64_t highest_seq;
    /* Above resume_seq: the events delivered, and per characteristic the
     * latest value delivered. Empty unless a value is held back. */
    uint64_t *delivered;
    size_t delivered_count, delivered_capacity;
    latest_value *latest;
    size_t latest_count, latest_capacity;
};

homed_cursor *homed_cursor_new(void) {
    homed_cursor *cursor = calloc(1, sizeof *cursor);
    if (cursor && !(cursor->journal_id = strdup(""))) {
        free(cursor);
        return NULL;
    }
    return cursor;
}

void homed_cursor_free(homed_cursor *cursor) {
    if (!cursor) return;
    free(cursor->journal_id);
    free(cursor->delivered);
    free(cursor->latest);
    free(cursor);
}

bool homed_cursor_has_resume_point(const homed_cursor *cursor) {
    return cursor->has_resume;
}

uint64_t homed_cursor_resume_seq(const homed_cursor *cursor) {
    return cursor->resume_seq;
}

const char *homed_cursor_journal_id(const homed_cursor *cursor) {
    return cursor->journal_id;
}

void homed_cursor_resume(const homed_cursor *cursor, Home__V1__SubscribeRequest *request) {
    if (!cursor->has_resume) return;
    request->since_present_case = HOME__V1__SUBSCRIBE_REQUEST__SINCE_PRESENT_SINCE_SEQ;
    request->since_seq = cursor->resume_seq;
    request->journal_id = cursor->journal_id;
    request->snapshot = 0;
}

/* Drops what a resume from `seq` can no longer replay: entries at or below it
 * (everything when `everything`). */
static void forget_up_to(homed_cursor *cursor, bool everything, uint64_t seq) {
    size_t kept = 0;
    for (size_t i = 0; i < cursor->delivered_count; i++)
        if (!everything && cursor->delivered[i] > seq) cursor->delivered[kept++] = cursor->delivered[i];
    cursor->delivered_count = kept;
    kept = 0;
    for (size_t i = 0; i < cursor->latest_count; i++)
        if (!everything && cursor->latest[i].seq > seq) cursor->latest[kept++] = cursor->latest[i];
    cursor->latest_count = kept;
}

static bool was_delivered(const homed_cursor *cursor, const Home__V1__Event *event) {
    for (size_t i = 0; i < cursor->delivered_count; i++)
        if (cursor->delivered[i] == event->seq) return true;
    if (event->body_case == HOME__V1__EVENT__BODY_VALUE && event->value) {
        for (size_t i = 0; i < cursor->latest_count; i++)
            if (cursor->latest[i].characteristic_id == event->value->characteristic_id)
                return event->seq <= cursor->latest[i].seq;
    }
    return false;
}

/* Room for `extra` more entries in both tables, so that recording cannot fail
 * halfway through a message. */
static bool reserve(homed_cursor *cursor, size_t extra) {
    if (cursor->delivered_count + extra > cursor->delivered_capacity) {
        size_t capacity = (cursor->delivered_count + extra) * 2;
        uint64_t *grown = realloc(cursor->delivered, capacity * sizeof *grown);
        if (!grown) return false;
        cursor->delivered = grown;
        cursor->delivered_capacity = capacity;
    }
    if (cursor->latest_count + extra > cursor->latest_capacity) {
        size_t capacity = (cursor->latest_count + extra) * 2;
        latest_value *grown = realloc(cursor->latest, capacity * sizeof *grown);
        if (!grown) return false;
        cursor->latest = grown;
        cursor->latest_capacity = capacity;
    }
    return true;
}

static void remember_value(homed_cursor *cursor, uint64_t characteristic_id, uint64_t seq) {
    for (size_t i = 0; i < cursor->latest_count; i++) {
        if (cursor->latest[i].characteristic_id == characteristic_id) {
            if (seq > cursor->latest[i].seq) cursor->latest[i].seq = seq;
            return;
        }
    }
    cursor->latest[cursor->latest_count++] = (latest_value){characteristic_id, seq};
}

size_t homed_cursor_accept(homed_cursor *cursor, const Home__V1__SubscribeResponse *message, unsigned char *fresh) {
    const char *journal = message->journal_id ? message->journal_id : "";
    bool holds_back = message->resume_present_case == HOME__V1__SUBSCRIBE_RESPONSE__RESUME_PRESENT_RESUME_AFTER;
    if (holds_back && !reserve(cursor, message->n_events)) {
        errno = ENOMEM;
        return 0;
    }
    if (strcmp(journal, cursor->journal_id) != 0) {
        char *copy = strdup(journal);
        if (!copy) {
            errno = ENOMEM;
            return 0;
        }
        /* Sequence numbers of another journal mean nothing here. */
        free(cursor->journal_id);
        cursor->journal_id = copy;
        forget_up_to(cursor, true, 0);
    }
    bool has_reached = false;
    uint64_t reached = 0;
    if (message->marker) {
        switch (message->marker->kind) {
        case HOME__V1__MARKER_KIND__MARKER_RESYNC:
            /* A fresh start: a snapshot at this sequence number follows. */
            forget_up_to(cursor, true, 0);
            cursor->has_resume = cursor->has_highest = true;
            cursor->resume_seq = cursor->highest_seq = message->marker->seq;
            break;
        case HOME__V1__MARKER_KIND__MARKER_SUBSCRIBED:
        case HOME__V1__MARKER_KIND__MARKER_SNAPSHOT_END:
        case HOME__V1__MARKER_KIND__MARKER_HEARTBEAT:
            /* Nothing is held back when the daemon sends these. */
            has_reached = true;
            reached = message->marker->seq;
            break;
        default:
            break;
        }
    }
    size_t fresh_count = 0;
    for (size_t i = 0; i < message->n_events; i++) {
        bool is_fresh = !was_delivered(cursor, message->events[i]);
        if (fresh) fresh[i] = is_fresh;
        fresh_count += is_fresh;
    }
    for (size_t i = 0; i < message->n_events; i++) {
        uint64_t seq = message->events[i]->seq;
        if (!has_reached || seq > reached) reached = seq;
        has_reached = true;
    }
    if (has_reached && (!cursor->has_highest || reached > cursor->highest_seq)) {
        cursor->has_highest = true;
        cursor->highest_seq = reached;
    }
    if (holds_back) {
        /* A value is held back below some of these events: remember what was
         * delivered above the resume point, so a replay does not repeat it. */
        uint64_t resume_after = message->resume_after;
        for (size_t i = 0; i < message->n_events; i++) {
            const Home__V1__Event *event = message->events[i];
            if (event->seq <= resume_after || (fresh ? !fresh[i] : was_delivered(cursor, event))) continue;
            cursor->delivered[cursor->delivered_count++] = event->seq;
            if (event->body_case == HOME__V1__EVENT__BODY_VALUE && event->value)
                remember_value(cursor, event->value->characteristic_id, event->seq);
        }
        cursor->has_resume = true;
        cursor->resume_seq = resume_after;
        forget_up_to(cursor, false, resume_after);
    } else if (has_reached) {
        if (!cursor->has_resume || reached > cursor->resume_seq) cursor->resume_seq = reached;
        cursor->has_resume = true;
        forget_up_to(cursor, false, cursor->resume_seq);
    }
    return fresh_count;
}
