"""The provider's core with no daemon and no clock: the reference tables, the
registration plan, the commands (late ones skipped), the reports and the
reconnection policy, fed by hand-made messages and times."""

import os
import sys

import pytest


from homed import HomedError, pb
from homed.commands import Job
from homed.errors import error_for
from homed.provider_core import ProviderCore, Reconnecting, open_refused, opened_of
from homed.refs import Ref
from homed.registration import MAX_ACCESSORIES_PER_CALL, RegistrationPlan

LAMP = {"key": "lamp-1", "name": "Desk Lamp", "category": "LIGHTBULB",
        "services": [{"type": "Lightbulb", "characteristics": [
            {"type": "On", "value": False},
            {"type": "Brightness", "value": 40, "metadata": {"format": "int"}}]}]}
ON = Ref("lamp-1", "Lightbulb", "On")
BRIGHTNESS = Ref("lamp-1", "Lightbulb", "Brightness")


def registered_lamp(accessory_id=7, on=10, brightness=11):
    """What the daemon answers for LAMP: AccessoryInformation first, then its service."""
    response = pb.RegisterAccessoriesResponse(seq=3)
    accessory = response.accessories.add(id=accessory_id, provider_key="lamp-1")
    info = accessory.services.add(type_name="AccessoryInformation")
    info.characteristics.add(id=8, type_name="Identify")
    bulb = accessory.services.add(type_name="Lightbulb")
    bulb.characteristics.add(id=on, type_name="On").metadata.format = pb.FORMAT_BOOL
    bulb.characteristics.add(id=brightness, type_name="Brightness").metadata.format = pb.FORMAT_INT
    return response


def core_with_lamp():
    core = ProviderCore("desk", [LAMP])
    plan = core.session_plan(reads=True, max_frame_size=0)
    batch = plan.next_batch()
    response = registered_lamp()
    plan.done(batch, response)
    core.installed(batch, response)
    core.registered(plan)
    return core


def command(request_id=5, timeout_ms=500, read=None, writes=None, atomic=False):
    message = pb.ProviderCommand(request_id=request_id, timeout_ms=timeout_ms)
    if read is not None:
        message.read.characteristic_ids.extend(read)
    else:
        for cid, value in writes:
            message.write.writes.add(characteristic_id=cid, value=value)
        message.write.atomic = atomic
    return message


# -- the tables -------------------------------------------------------------------

def test_a_registration_names_every_characteristic_both_ways():
    core = core_with_lamp()
    assert core.table.ids[ON] == 10 and core.table.refs[11] == BRIGHTNESS
    assert core.table.ids[Ref("lamp-1", "AccessoryInformation", "Identify")] == 8
    assert core.table.accessory_ids == {"lamp-1": 7}
    assert core.table.format_of(11) == pb.FORMAT_INT
    assert core.registrations == 1 and core.sent_keys == {"lamp-1"}


def test_registering_a_key_again_forgets_its_old_ids():
    core = core_with_lamp()
    core.table.install([core.accessories["lamp-1"]], registered_lamp(on=20, brightness=21))
    assert core.table.ids[ON] == 20 and 10 not in core.table.refs


def test_values_already_sent_are_left_out_when_the_provider_reads():
    core = core_with_lamp()
    again = core.session_plan(reads=True, max_frame_size=0).next_batch()
    assert not any(c.HasField("value") for s in again.accessories[0].services for c in s.characteristics)
    kept = core.session_plan(reads=False, max_frame_size=0).next_batch()
    assert kept.accessories[0].services[0].characteristics[0].HasField("value")


def test_keys_removed_while_away_are_removed_at_the_next_session_if_the_daemon_knows_them():
    core = core_with_lamp()
    assert not core.stage_remove(["lamp-1", "ghost"], connected=False).now
    core.known_keys = ["lamp-1"]
    batch = core.session_plan(reads=True, max_frame_size=0).next_batch()
    assert list(batch.request.remove_keys) == ["lamp-1"] and batch.accessories == []


def test_a_change_is_told_now_only_when_connected_and_an_update_the_daemon_refuses_is_undone():
    core = core_with_lamp()
    change = core.stage_update([{"key": "fan", "name": "Fan", "category": "FAN"}], connected=True)
    assert change.now and [a.key for a in change.accessories] == ["fan"]
    assert list(core.accessories) == ["lamp-1", "fan"]
    core.undo(change)
    assert list(core.accessories) == ["lamp-1"]
    removal = core.stage_remove(["lamp-1", "ghost"], connected=True)
    assert removal.now and removal.remove_keys == ["lamp-1"] and not core.removed  # ghost: unknown to the daemon
    assert not core.stage_remove(["ghost"], connected=True).now
    # A key the daemon knew when the session opened, not registered since (a
    # device that left while the provider was away), is removed now too, once.
    core.known_keys = ["old-lamp"]
    removal = core.stage_remove(["old-lamp"], connected=True)
    assert removal.now and removal.remove_keys == ["old-lamp"] and core.known_keys == []
    assert not core.stage_remove(["old-lamp"], connected=True).now


# -- commands: late ones are not handled --------------------------------------------

def test_a_key_the_daemon_listed_at_opening_is_removed_now_though_this_session_never_registered_it():
    core = ProviderCore("desk", [])
    core.known_keys = ["old-1"]  # registered in an earlier session only
    removal = core.stage_remove(["old-1", "ghost"], connected=True)
    assert removal.now and removal.remove_keys == ["old-1"]


def test_a_command_whose_deadline_passed_is_skipped_and_counted():
    core = core_with_lamp()
    job = core.job(command(read=[10], timeout_ms=500), received_at=100.0)
    assert not job.is_late(100.5) and job.is_late(100.501)
    assert core.begin(job, has_handler=True, now=100.6) is None
    assert job.late and job.args == ()
    assert core.stats["late"] == 1 and "reads" not in core.stats


def test_a_command_within_its_deadline_goes_to_the_handler():
    core = core_with_lamp()
    job = core.job(command(read=[10, 11, 10], timeout_ms=500), received_at=100.0)
    assert core.begin(job, has_handler=True, now=100.4) is None
    assert not job.late and job.args == ([ON, BRIGHTNESS],)
    answer = job.finish({ON: True, BRIGHTNESS: 55})
    assert [(r.characteristic_id, r.value.WhichOneof("kind")) for r in answer.reads] == [
        (10, "bool_value"), (11, "int_value"), (10, "bool_value")]
    assert "late" not in core.stats


def test_a_command_with_no_timeout_is_never_late():
    job = Job(command(read=[10], timeout_ms=0), "desk", received_at=0.0)
    assert job.deadline is None and not job.is_late(1e9)
    assert job.wait_until == 5.0


def test_a_write_goes_to_the_handler_in_python_values_and_its_failures_are_answered():
    core = core_with_lamp()
    job = core.job(command(writes=[(10, pb.Value(bool_value=True)), (99, pb.Value(int_value=1))]), 0.0)
    assert core.begin(job, has_handler=True, now=0.1) is None
    assert job.args == ({ON: True}, False)
    answer = job.finish({ON: PermissionError("stuck")})
    assert [(w.characteristic_id, w.code) for w in answer.writes] == [(10, pb.PERMISSION_DENIED), (99, pb.NOT_FOUND)]


def test_an_atomic_write_naming_an_unknown_id_is_refused_whole_without_the_handler():
    core = core_with_lamp()
    job = core.job(command(writes=[(10, pb.Value(bool_value=True)), (99, pb.Value(int_value=1))], atomic=True), 0.0)
    answer = core.begin(job, has_handler=True, now=0.0)
    assert answer.code == pb.NOT_FOUND and "99" in answer.message and job.args == ()


def test_no_handler_answers_unimplemented_and_a_handler_error_fails_the_command():
    core = core_with_lamp()
    job = core.job(command(read=[10]), 0.0)
    assert core.begin(job, has_handler=False, now=0.0).code == pb.UNIMPLEMENTED
    job = core.job(command(read=[10]), 0.0)
    core.begin(job, has_handler=True, now=0.0)
    assert job.failed(TimeoutError("slow")).code == pb.DEADLINE_EXCEEDED


def test_a_command_waits_for_a_registration_in_flight_until_its_deadline():
    core = core_with_lamp()
    job = core.job(command(read=[42], timeout_ms=1000), received_at=10.0)
    assert core.refs_wait(job, 10.2) == 0.0  # nothing under way: look up now
    core.registering = 1
    assert core.refs_wait(job, 10.2) == pytest.approx(0.8)
    assert core.refs_wait(job, 11.5) == 0.0
    known = core.job(command(read=[10]), received_at=10.0)
    assert core.refs_wait(known, 10.2) == 0.0


def test_answers_the_daemon_dropped_are_counted():
    core = core_with_lamp()
    job = core.job(command(read=[10]), 0.0)
    core.answered(job, pb.AnswerCommandResponse(accepted=False))
    core.answered(job, None)
    assert core.stats["reads"] == 2 and core.stats["answers_dropped"] == 1


# -- the registration plan ----------------------------------------------------------

def accessories(count, bridge_last=True):
    many = [pb.ProvidedAccessory(key=f"switch-{n}", name=f"Switch {n}", bridge_key="bridge") for n in range(count)]
    bridge = pb.ProvidedAccessory(key="bridge", name="Bridge")
    return many + [bridge] if bridge_last else [bridge] + many


def drive(plan, fail=lambda batch: None):
    """Makes the plan's calls by hand: ``fail(batch)`` gives an error or None."""
    calls = []
    for batch in iter(plan.next_batch, None):
        calls.append(batch)
        error = fail(batch)
        if error is not None:
            if plan.retry(batch, error):
                continue
            raise error
        response = pb.RegisterAccessoriesResponse(seq=len(calls))
        for accessory in batch.accessories:
            response.accessories.add(provider_key=accessory.key)
        plan.done(batch, response)
    return calls


def test_more_than_a_thousand_accessories_go_in_parts_bridges_first_removals_with_the_first():
    plan = RegistrationPlan(0, accessories(1200), ["old"])
    calls = drive(plan)
    assert [len(c.accessories) for c in calls] == [MAX_ACCESSORIES_PER_CALL, 201]
    assert calls[0].accessories[0].key == "bridge"
    assert list(calls[0].request.remove_keys) == ["old"] and list(calls[1].request.remove_keys) == []
    merged = plan.response()
    assert len(merged.accessories) == 1201 and merged.seq == 2


def test_a_request_larger_than_a_frame_is_sent_in_halves():
    plan = RegistrationPlan(0, accessories(7), ["old"], max_frame_size=1024 + 150)
    calls = drive(plan)
    assert all(c.request.ByteSize() + 1024 <= 1024 + 150 or len(c.accessories) == 1 for c in calls)
    assert [a.key for c in calls for a in c.accessories] == [a.key for a in accessories(7)]
    assert list(calls[0].remove_keys) == ["old"] and not any(c.remove_keys for c in calls[1:])


def test_a_response_too_large_for_a_frame_is_asked_again_in_halves_without_the_removals():
    too_large = error_for(pb.RESOURCE_EXHAUSTED, "the response exceeds the frame size")
    plan = RegistrationPlan(0, accessories(4), ["old"])
    calls = drive(plan, fail=lambda batch: too_large if len(batch.accessories) > 2 else None)
    assert [len(c.accessories) for c in calls] == [5, 2, 3, 1, 2]
    assert [list(c.remove_keys) for c in calls] == [["old"], [], [], [], []]
    assert calls[1].forget == ("old",)  # the removal took effect with the first call
    assert len(plan.response().accessories) == 5


def test_a_refused_registration_ends_the_plan_marked_permanent():
    refused = error_for(pb.INVALID_ARGUMENT, "accessory 1: no")
    with pytest.raises(HomedError) as raised:
        drive(RegistrationPlan(0, accessories(2)), fail=lambda batch: refused)
    assert raised.value.permanent
    unavailable = error_for(pb.UNAVAILABLE, "gone")
    with pytest.raises(HomedError) as raised:
        drive(RegistrationPlan(0, accessories(2)), fail=lambda batch: unavailable)
    assert not raised.value.permanent


# -- the session and the reports ----------------------------------------------------

def test_the_first_command_must_be_opened():
    core = ProviderCore("desk")
    opened = pb.ProviderCommand()
    opened.opened.known_keys.extend(["a", "b"])
    opened.opened.ping_interval_ms = 300
    core.opened(opened)
    assert core.known_keys == ["a", "b"] and core.ping_interval_ms == 300 and core.stats["sessions"] == 1
    with pytest.raises(HomedError) as raised:
        opened_of(pb.ProviderCommand(ping=pb.PingCommand()))
    assert raised.value.code == pb.INTERNAL
    with pytest.raises(HomedError) as raised:
        opened_of(None)
    assert raised.value.code == pb.UNAVAILABLE
    held = open_refused(error_for(pb.ALREADY_EXISTS, "held"))
    assert held.held and held.permanent


def test_reports_use_the_registered_ids_and_formats():
    core = core_with_lamp()
    report = core.value_report([(ON, 1), (BRIGHTNESS, 30)])
    assert [(v.characteristic_id, v.value.WhichOneof("kind")) for v in report.values] == [
        (10, "bool_value"), (11, "int_value")]
    with pytest.raises(HomedError) as raised:
        core.value_report({Ref("lamp-1", "Lightbulb", "Hue"): 3})
    assert raised.value.code == pb.NOT_FOUND
    with pytest.raises(HomedError) as raised:
        core.value_report({ON: "yes"})
    assert raised.value.code == pb.INVALID_ARGUMENT
    assert core.reachability_report("lamp-1", False).reachability[0].accessory_id == 7
    assert core.report_seq(pb.ValueReportResponse(seq=9)) == 9
    refused = pb.ValueReportResponse(seq=9)
    refused.rejected.add(characteristic_id=11, code=pb.INVALID_ARGUMENT, message="above 100")
    with pytest.raises(HomedError) as raised:
        core.report_seq(refused)
    assert raised.value.code == pb.INVALID_ARGUMENT and raised.value.message == f"{BRIGHTNESS}: above 100"


# -- reconnecting -------------------------------------------------------------------

def test_the_backoff_doubles_to_its_maximum_and_starts_again_once_registered():
    policy = Reconnecting(0.1, 0.5, 3.0)
    assert [policy.wait() for _ in range(4)] == [0.1, 0.2, 0.4, 0.5]
    policy.served(registered=True)
    assert policy.wait() == 0.1


def test_an_id_held_elsewhere_is_retried_for_the_takeover_wait_then_ends_the_provider():
    policy = Reconnecting(0.1, 5.0, takeover_wait=3.0)

    def held():
        return open_refused(error_for(pb.ALREADY_EXISTS, "held"))

    assert not policy.failed(held(), now=10.0)
    assert not policy.failed(held(), now=12.9)
    assert policy.failed(held(), now=13.0)
    assert not policy.failed(error_for(pb.UNAVAILABLE, "restarting"), now=14.0)
    assert not policy.failed(ConnectionRefusedError(), now=14.0)


def test_a_refusal_for_want_of_the_admin_role_or_of_the_socket_ends_the_provider_and_names_the_fix():
    """Neither is mended by retrying: the provider ends (exit status 2 in a
    program on run_until_signalled) with the way to get the role or the group."""
    from homed.errors import SocketNotPermitted
    denied = open_refused(error_for(pb.PERMISSION_DENIED, "home.v1.HomeService/OpenProvider needs the admin role; "
                                                          "the caller (uid 1000, pid 9) has the user role"))
    assert denied.permanent
    assert denied.message.endswith("; serving accessories needs the admin role: run the provider as the homed user "
                                   "(User=homed in its unit) or add its user under roles.admins in homed's "
                                   "configuration, then `systemctl reload homed`")
    policy = Reconnecting(0.1, 5.0, takeover_wait=3.0)
    assert policy.failed(denied, 0.0) is True
    socket_error = SocketNotPermitted("/nonexistent/homed.sock", PermissionError(13, "Permission denied"))
    assert isinstance(socket_error, PermissionError) and socket_error.code == pb.PERMISSION_DENIED
    assert policy.failed(socket_error, 0.0) is True
    assert "may not open homed's socket" in socket_error.message
    # A daemon that is not there yet is retried.
    assert policy.failed(ConnectionRefusedError(111, "Connection refused"), 0.0) is False


def test_a_category_is_taken_in_every_spelling_homed_takes_elsewhere():
    """The spellings of homectl's output, simulation files and the schema all name
    one category (and an unknown one lists the names)."""
    from homed.accessories import enum_number
    spellings = ["window covering", "WINDOW_COVERING", "CATEGORY_WINDOW_COVERING", "windowCovering",
                 "window-covering", "Window Covering"]
    assert {enum_number("AccessoryCategory", "CATEGORY_", s) for s in spellings} == {pb.CATEGORY_WINDOW_COVERING}
    assert enum_number("AccessoryCategory", "CATEGORY_", "sensor") == pb.CATEGORY_SENSOR
    with pytest.raises(ValueError) as raised:
        enum_number("AccessoryCategory", "CATEGORY_", "toaster")
    assert "unknown AccessoryCategory 'toaster'" in str(raised.value)
