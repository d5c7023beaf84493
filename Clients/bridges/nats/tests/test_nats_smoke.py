"""The journal bridge end to end: events in the stream on filterable subjects."""

import json

from homed_testkit.providers import wait_for

from homed_nats import layout as L
from .nats_home import Devices, TEMP, char_id, direct_log, found, journal_events, make_home, read_bucket, read_stream, \
    start_bridge, wait_snapshot


def test_every_event_reaches_the_stream_once_in_order_on_its_subject(homed, server, processes):
    with homed.client() as client:
        home_id = make_home(client)
    devices = Devices(homed.socket_path).start()
    events = direct_log(homed)
    names = L.Names("home")
    try:
        bridge = start_bridge(homed, server.url, processes)
        wait_snapshot(bridge)
        for i in range(50):
            devices.report(TEMP, 20.0 + i)
        with homed.client() as client:
            sensor = found(client)["sensor"]
        temp = char_id(sensor, "CurrentTemperature")
        events.wait_for(lambda e: e.value.characteristic_id == temp and e.value.value.float_value == 69.0)
        seen = [(e.seq) for _, e in events.events]

        def caught_up():
            got = journal_events(read_stream(server.url, names))
            return got if [s for _, s, _ in got][-1:] == seen[-1:] else None
        got = wait_for(caught_up, 15, "the stream to hold the last event", bridge)
        assert [s for _, s, _ in got] == seen
        temp_subjects = {subject for _, subject, headers, _ in read_stream(server.url, names)
                         if headers.get(L.HDR_KIND) == "value" and f".{sensor.id}." in subject}
        assert temp_subjects == {f"homed.home.journal.ev.{home_id}.{sensor.room_id}.{sensor.id}.value"}
        cursor, values = read_bucket(server.url, names)
        assert temp in values, (cursor, sorted(values), bridge.log()[-3000:])
        assert values[temp]["value"] == {"float_value": 69.0}
        assert "Traceback" not in bridge.log()
    finally:
        events.close()
        devices.stop()


def test_every_record_carries_the_message_id_the_readme_documents(homed, server, processes):
    """README ("The stream"): `Nats-Msg-Id` is `<journal>:<seq>` for an event and
    `<journal>:<seq>:<record>@<stream position>` for a sync record (resync,
    snapshot pages, end), `<record>` being its Homed-Record."""
    with homed.client() as client:
        make_home(client)
    devices = Devices(homed.socket_path).start()
    names = L.Names("home")
    try:
        bridge = start_bridge(homed, server.url, processes)
        wait_snapshot(bridge)
        devices.report(TEMP, 21.5)

        def complete():
            records = read_stream(server.url, names)
            kinds = [headers.get(L.HDR_RECORD) for _, _, headers, _ in records]
            return records if L.END in kinds and kinds[-1] == L.EVENT else None
        records = wait_for(complete, 15, "the snapshot and an event in the stream", bridge)
        kinds = {headers[L.HDR_RECORD] for _, _, headers, _ in records}
        assert kinds == {L.RESYNC, L.SNAPSHOT, L.END, L.EVENT}
        for stream_seq, subject, headers, _ in records:
            journal, seq, record = headers[L.HDR_JOURNAL], headers[L.HDR_SEQ], headers[L.HDR_RECORD]
            wanted = f"{journal}:{seq}" if record == L.EVENT else f"{journal}:{seq}:{record}@{stream_seq}"
            assert headers["Nats-Msg-Id"] == wanted, (stream_seq, subject, headers)
    finally:
        devices.stop()
