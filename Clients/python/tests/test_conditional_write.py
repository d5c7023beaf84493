"""Conditional writes against a real `homed --demo` (see conftest.daemon), and
`write_condition` with no daemon."""

import threading

import pytest

from homed import Client, pb
from homed.client_core import write_condition, write_request

from .test_client import CALL_TIMEOUT, find_lamp


def test_write_condition_from_what_a_caller_has():
    read = pb.CharacteristicRead(characteristic_id=17, value=pb.Value(int_value=40), change_seq=12)
    assert write_condition(read) == pb.WriteCondition(value=pb.Value(int_value=40), seq=12)
    assert write_condition(pb.Value(bool_value=True)) == pb.WriteCondition(value=pb.Value(bool_value=True))
    made = write_condition(0)
    assert made.WhichOneof("seq_present") == "seq" and made.seq == 0, "seq 0 is a condition, not none"
    with pytest.raises(TypeError):
        write_condition(True)
    with pytest.raises(ValueError, match=r"not written: \[9\]"):
        write_request({17: pb.Value(int_value=1)}, conditions={9: 3})


def test_two_writers_on_one_reading_exactly_one_wins(daemon):
    clients = [Client.connect(daemon.socket_path, client_name=f"automation-{i}", call_timeout=CALL_TIMEOUT)
               for i in range(2)]
    try:
        _, lamp = find_lamp(clients[0])
        cid = lamp["Brightness"].id
        read = clients[0].read([cid]).reads[0]
        results = [None, None]
        start = threading.Barrier(2)

        def write(i):
            start.wait()
            results[i] = clients[i].write({cid: pb.Value(int_value=10 + i)}, conditions={cid: read}).results[0]

        threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [r for r in results if r.code == pb.OK]
        losers = [r for r in results if r.code != pb.OK]
        assert len(winners) == 1 and len(losers) == 1, results
        assert losers[0].code == pb.FAILED_PRECONDITION
        assert f"last changed at seq {winners[0].seq}" in losers[0].message
        after = clients[0].read([cid]).reads[0]
        assert after.change_seq == winners[0].seq
        # The winner's reading holds: a write on it succeeds.
        again = clients[1].write({cid: pb.Value(int_value=33)}, conditions={cid: after}).results[0]
        assert again.code == pb.OK, again.message
    finally:
        for client in clients:
            client.close()
