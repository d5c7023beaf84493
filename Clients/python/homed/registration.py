"""How a provider's accessories are cut into RegisterAccessories calls: at most
1 000 accessories per call (the daemon's limit), bridges first (an accessory
may name a bridge registered in an earlier call, not a later one), and each
request and response within the connection's frame size.

No I/O here: a :class:`RegistrationPlan` hands out the requests one at a time
and is told how each went, so the synchronous and the asyncio providers drive
the same plan with their own calls::

    plan = RegistrationPlan(home_id, accessories, remove_keys, client.max_frame_size)
    for batch in iter(plan.next_batch, None):
        try:
            response = client.call("RegisterAccessories", batch.request)
        except HomedError as error:
            if plan.retry(batch, error):
                continue
            raise
        plan.done(batch, response)
    merged = plan.response()
"""

from __future__ import annotations

import collections
import logging
from typing import List, NamedTuple, Optional, Sequence, Tuple

from . import proto as pb
from .framing import DEFAULT_MAX_FRAME_SIZE

__all__ = ["MAX_ACCESSORIES_PER_CALL", "PERMANENT", "Batch", "RegistrationPlan", "bridges_first"]

log = logging.getLogger("homed.provider")

#: RegisterAccessories carries at most this many accessories per call.
MAX_ACCESSORIES_PER_CALL = 1000

#: Codes for which a refused OpenProvider or RegisterAccessories is not retried:
#: retrying the same request would be refused the same way.
PERMANENT = (pb.INVALID_ARGUMENT, pb.ALREADY_EXISTS, pb.NOT_FOUND, pb.PERMISSION_DENIED)

# Room left in a frame for its header and the Frame message around the request.
_FRAME_MARGIN = 1024


class Batch(NamedTuple):
    """One RegisterAccessories call of a plan."""

    accessories: List[object]
    #: The keys this call removes (sent in ``request.remove_keys``).
    remove_keys: Tuple[str, ...]
    request: object
    #: The keys to drop from the reference tables once it succeeds: its
    #: ``remove_keys``, or those of an earlier call that took effect although
    #: its response did not fit a frame.
    forget: Tuple[str, ...]


def bridges_first(accessories: Sequence) -> List[object]:
    """The accessories with the bridges that others name first, when there are
    more than one call's worth (in one call the order does not matter)."""
    accessories = list(accessories)
    if len(accessories) <= MAX_ACCESSORIES_PER_CALL:
        return accessories
    bridges = {a.bridge_key for a in accessories if a.bridge_key}
    return [a for a in accessories if a.key in bridges] + [a for a in accessories if a.key not in bridges]


class RegistrationPlan:
    """The calls that register ``accessories`` and remove ``remove_keys``, in
    order (depth first: a part split in halves is done before the next part)."""

    def __init__(self, home_id: int, accessories: Sequence, remove_keys: Sequence[str] = (),
                 max_frame_size: int = DEFAULT_MAX_FRAME_SIZE, provider_id: str = ""):
        self.home_id = home_id
        self.max_frame_size = max_frame_size
        self.provider_id = provider_id
        #: Every accessory of the plan, in the order of its calls.
        self.accessories = ordered = bridges_first(accessories)
        # (accessories, remove_keys, forget) still to be sent
        self._pending: "collections.deque[Tuple[list, tuple, tuple]]" = collections.deque()
        for start in range(0, max(1, len(ordered)), MAX_ACCESSORIES_PER_CALL):
            keys = tuple(remove_keys) if start == 0 else ()
            self._pending.append((ordered[start:start + MAX_ACCESSORIES_PER_CALL], keys, keys))
        self._responses: list = []
        #: True for a new session's plan: every accessory, and the removals
        #: made while disconnected.
        self.session = False

    def request(self, accessories, remove_keys=()):
        request = pb.RegisterAccessoriesRequest(home_id=self.home_id)
        request.accessories.extend(accessories)
        request.remove_keys.extend(remove_keys)
        return request

    def next_batch(self) -> Optional[Batch]:
        """The next call to make; None when every call has succeeded."""
        while self._pending:
            accessories, remove_keys, forget = self._pending.popleft()
            request = self.request(accessories, remove_keys)
            if len(accessories) > 1 and request.ByteSize() + _FRAME_MARGIN > self.max_frame_size:
                # The request alone would not fit a frame: halves, the removals with the first.
                self._split(accessories, remove_keys, forget)
                continue
            return Batch(accessories, remove_keys, request, forget)
        return None

    def done(self, batch: Batch, response) -> None:
        """The call of ``batch`` succeeded with ``response``."""
        self._responses.append(response)

    def retry(self, batch: Batch, error) -> bool:
        """The call of ``batch`` failed with ``error`` (a HomedError). True when
        the plan goes on without it: its response did not fit a frame, but the
        registration took effect (removals too), so the same accessories are
        asked again in halves to learn their ids. False: the error ends the
        plan; ``error.permanent`` then says whether retrying later can help."""
        error.permanent = error.code in PERMANENT
        if error.code != pb.RESOURCE_EXHAUSTED or len(batch.accessories) <= 1:
            return False
        log.info("provider %s: the response for %d accessories exceeds the frame size; asking in halves",
                 self.provider_id, len(batch.accessories))
        self._split(batch.accessories, (), batch.forget)
        return True

    def _split(self, accessories, remove_keys, forget) -> None:
        half = len(accessories) // 2
        self._pending.appendleft((accessories[half:], (), ()))
        self._pending.appendleft((accessories[:half], remove_keys, forget))

    def response(self):
        """One RegisterAccessoriesResponse with every accessory registered, in
        the order of the calls, and the last call's seq."""
        merged = pb.RegisterAccessoriesResponse()
        for response in self._responses:
            merged.accessories.extend(response.accessories)
            merged.seq = max(merged.seq, response.seq)
        return merged
