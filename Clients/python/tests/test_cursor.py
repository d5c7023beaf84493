"""StreamCursor: resuming a stream with exactly what was missed, message by
message, and over a real daemon with a value held back by min_interval_ms."""

import pytest

from homed import Client, StreamCursor, pb

from .test_client import CALL_TIMEOUT, find_lamp, number_of, number_value


def value_event(seq, characteristic_id, number):
    event = pb.Event(seq=seq, kind=pb.EVENT_VALUE_CHANGED)
    event.value.characteristic_id = characteristic_id
    event.value.value.int_value = number
    return event


def message(events=(), resume_after=None, marker=None, journal="j"):
    response = pb.SubscribeResponse(journal_id=journal, events=list(events))
    if resume_after is not None:
        response.resume_after = resume_after
    if marker is not None:
        response.marker.CopyFrom(pb.StreamMarker(kind=marker[0], seq=marker[1]))
    return response


def seqs(events):
    return [event.seq for event in events]


def test_without_held_values_the_resume_point_is_the_highest_seq():
    cursor = StreamCursor()
    assert cursor.accept(message(marker=(pb.MARKER_SUBSCRIBED, 4))) == []
    assert cursor.resume_seq == 4
    assert seqs(cursor.accept(message([value_event(5, 10, 1), value_event(6, 11, 1)]))) == [5, 6]
    assert cursor.resume_seq == 6
    request = cursor.resume(pb.SubscribeRequest(snapshot=True))
    assert (request.since_seq, request.journal_id, request.snapshot) == (6, "j", False)


def test_a_replay_after_held_values_repeats_nothing_and_regresses_no_value():
    cursor = StreamCursor("j", 4)
    assert seqs(cursor.accept(message([value_event(6, 11, 1)], resume_after=4))) == [6]
    assert seqs(cursor.accept(message([value_event(8, 10, 2)], resume_after=6))) == [8]
    assert cursor.resume_seq == 6
    cursor.accept(message(marker=(pb.MARKER_SUBSCRIBED, 6)))
    replay = cursor.accept(message([value_event(7, 9, 3), value_event(8, 10, 2), value_event(10, 11, 4)]))
    assert seqs(replay) == [7, 10]
    assert cursor.resume_seq == 10
    # An older value of a characteristic whose later value was delivered is stale.
    stale = StreamCursor("j", 2)
    stale.accept(message([value_event(6, 10, 9)], resume_after=3))
    assert seqs(stale.accept(message([value_event(4, 20, 1), value_event(5, 10, 1), value_event(7, 10, 3)]))) == [4, 7]


def test_a_resync_forgets_everything():
    cursor = StreamCursor("j", 2)
    cursor.accept(message([value_event(5, 30, 1)], resume_after=2))
    cursor.accept(message(marker=(pb.MARKER_RESYNC, 50)))
    assert cursor.resume_seq == 50
    assert len(cursor.accept(message([value_event(5, 30, 1)]))) == 1


def test_a_value_held_by_the_minimum_interval_survives_a_disconnect(daemon):
    writer = Client.connect(daemon.socket_path, client_name="pytest-writer", call_timeout=CALL_TIMEOUT)
    try:
        _, chars = find_lamp(writer)
        brightness, hue, saturation = chars["Brightness"], chars["Hue"], chars["Saturation"]
        request = pb.SubscribeRequest(min_interval_ms=60_000)
        request.filter.characteristic_ids.extend([brightness.id, hue.id, saturation.id])
        cursor = StreamCursor()
        delivered = []
        watcher = Client.connect(daemon.socket_path, client_name="pytest-watcher", call_timeout=CALL_TIMEOUT)
        stream = watcher.subscribe(request)
        cursor.accept(stream.get(timeout=CALL_TIMEOUT))
        first = 20 if number_of(writer.read([brightness.id]).reads[0].value) != 20 else 40
        # The first change of each goes out at once; the next Brightness is held,
        # and Saturation's change after it goes out above it.
        writer.write({brightness.id: number_value(brightness, first)})
        writer.write({brightness.id: number_value(brightness, first + 1)})
        last = writer.write({saturation.id: number_value(saturation, 7)}).seq
        while last not in seqs(delivered):
            delivered += cursor.accept(stream.get(timeout=CALL_TIMEOUT))
        watcher.close()

        resumed = Client.connect(daemon.socket_path, client_name="pytest-resumed", call_timeout=CALL_TIMEOUT)
        try:
            again = resumed.subscribe(cursor.resume(request))
            marker = writer.write({hue.id: number_value(hue, 3)}).seq  # never held: Hue's first change
            while marker not in seqs(delivered):
                delivered += cursor.accept(again.get(timeout=CALL_TIMEOUT))
        finally:
            resumed.close()
        brightness_values = [number_of(e.value.value) for e in delivered if e.value.characteristic_id == brightness.id]
        assert brightness_values == [first, first + 1], "the held change arrives on resume"
        assert len(set(seqs(delivered))) == len(delivered), "nothing twice"
    finally:
        writer.close()
