"""The answers a provider sends to the daemon's read and write commands, made
from what its handlers returned: shared by the synchronous ``homed.Provider``
and the asyncio ``homed.aio.Provider``, which differ only in how they call the
handlers. No I/O here."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

from . import proto as pb
from .values import from_value, set_status, to_value


def unanswerable(command, code: int, message: str):
    """A whole command refused with ``code``: every item of it fails so."""
    answer = pb.CommandAnswer(request_id=command.request_id)
    answer.code = code
    answer.message = message
    return answer


def handler_failed(command, error):
    """The handler raised: its error is the answer to the whole command."""
    answer = pb.CommandAnswer(request_id=command.request_id)
    set_status(answer, error)
    return answer


def no_reader(command, provider_id: str):
    return unanswerable(command, pb.UNIMPLEMENTED, f"provider {provider_id!r} does not read its devices")


def no_writer(command, provider_id: str):
    return unanswerable(command, pb.UNIMPLEMENTED, f"provider {provider_id!r} takes no writes")


def read_answer(command, provider_id: str, refs: Sequence, values: Mapping, formats: Mapping[int, int]):
    """One read per id of the command, in order: the handler's value in the
    characteristic's format, its error, or NOT_FOUND for an id with no Ref or a
    Ref the handler gave no value for."""
    answer = pb.CommandAnswer(request_id=command.request_id)
    for cid, ref in zip(command.read.characteristic_ids, refs):
        read = answer.reads.add(characteristic_id=cid)
        if ref is None:
            read.code = pb.NOT_FOUND
            read.message = f"provider {provider_id!r} registered no characteristic with id {cid}"
            continue
        if ref not in values:
            read.code = pb.NOT_FOUND
            read.message = f"provider {provider_id!r} has no value for {ref}"
            continue
        value = values[ref]
        if isinstance(value, BaseException):
            set_status(read, value)
            continue
        try:
            read.value.CopyFrom(to_value(value, formats.get(cid, pb.FORMAT_UNSPECIFIED)))
        except (TypeError, ValueError) as error:
            read.ClearField("value")
            read.code = pb.INTERNAL
            read.message = f"provider {provider_id!r} read {value!r} for {ref}: {error}"
    return answer


def atomic_write_refusal(command, provider_id: str, refs: Sequence):
    """An atomic write naming ids this provider has no Ref for is refused whole
    (nothing may be applied); None when there is nothing to refuse."""
    unknown = [w.characteristic_id for w, ref in zip(command.write.writes, refs) if ref is None]
    if not unknown or not command.write.atomic:
        return None
    return unanswerable(command, pb.NOT_FOUND,
                        f"provider {provider_id!r} registered no characteristic with id "
                        f"{', '.join(map(str, unknown))}; nothing of this atomic write was applied")


def write_values(command, refs: Sequence, formats: Mapping[int, int]) -> Dict:
    """{Ref: value} for the write handler, each value in Python form."""
    values: Dict = {}
    for write, ref in zip(command.write.writes, refs):
        if ref is not None:
            values[ref] = from_value(write.value, formats.get(write.characteristic_id, pb.FORMAT_UNSPECIFIED))
    return values


def write_answer(command, provider_id: str, refs: Sequence, failed: Optional[Mapping]):
    """One result per write, in order: OK, the handler's error for its Ref, or
    NOT_FOUND for an id with no Ref."""
    failed = failed or {}
    answer = pb.CommandAnswer(request_id=command.request_id)
    for write, ref in zip(command.write.writes, refs):
        result = answer.writes.add(characteristic_id=write.characteristic_id)
        if ref is None:
            result.code = pb.NOT_FOUND
            result.message = f"provider {provider_id!r} registered no characteristic with id {write.characteristic_id}"
        elif ref in failed and failed[ref] is not None:
            set_status(result, failed[ref])
    return answer


def asked(refs: Sequence) -> List:
    """The distinct Refs of a read, in order, for the read handler."""
    return list(dict.fromkeys(ref for ref in refs if ref is not None))
