"""Where a subscription stands, for resuming it after a disconnect with exactly
what was missed: the same rule as the Swift client's StreamCursor."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from . import proto as pb


class StreamCursor:
    """Feed it every SubscribeResponse and use only the events ``accept`` returns;
    to resume, subscribe with ``resume(request)``.

    The resume point is the highest sequence number received, unless the last
    message carried ``resume_after`` (a subscription with ``min_interval_ms`` holds
    a value back below events it already sent). A resume from there replays events
    already delivered, and older values of characteristics whose later value was
    delivered; the cursor drops both."""

    def __init__(self, journal_id: str = "", resume_seq: Optional[int] = None):
        self.journal_id = journal_id
        self.resume_seq = resume_seq
        self.highest_seq = resume_seq
        self._delivered_above: Set[int] = set()
        self._latest_value_above: Dict[int, int] = {}

    def resume(self, request):
        """``request`` (a SubscribeRequest) set to resume where this cursor stands."""
        if self.resume_seq is not None:
            request.since_seq = self.resume_seq
            request.journal_id = self.journal_id
            request.snapshot = False
        return request

    def accept(self, message) -> List:
        """Takes in one stream message; returns its events not delivered before."""
        if message.journal_id != self.journal_id:
            # Sequence numbers of another journal mean nothing here.
            self.journal_id = message.journal_id
            self._forget_up_to(None)
        reached: Optional[int] = None
        if message.HasField("marker"):
            kind = message.marker.kind
            if kind == pb.MARKER_RESYNC:
                self._forget_up_to(None)
                self.resume_seq = self.highest_seq = message.marker.seq
            elif kind in (pb.MARKER_SUBSCRIBED, pb.MARKER_SNAPSHOT_END, pb.MARKER_HEARTBEAT):
                # Nothing is held back when the daemon sends these.
                reached = message.marker.seq
        fresh = [event for event in message.events if not self._was_delivered(event)]
        for event in message.events:
            reached = event.seq if reached is None else max(reached, event.seq)
        if reached is not None:
            self.highest_seq = reached if self.highest_seq is None else max(self.highest_seq, reached)
        if message.WhichOneof("resume_present") == "resume_after":
            resume_after = message.resume_after
            for event in fresh:
                if event.seq > resume_after:
                    self._delivered_above.add(event.seq)
                    if event.WhichOneof("body") == "value":
                        cid = event.value.characteristic_id
                        self._latest_value_above[cid] = max(self._latest_value_above.get(cid, 0), event.seq)
            self.resume_seq = resume_after
            self._forget_up_to(resume_after)
        elif reached is not None:
            self.resume_seq = reached if self.resume_seq is None else max(self.resume_seq, reached)
            self._forget_up_to(self.resume_seq)
        return fresh

    def _was_delivered(self, event) -> bool:
        if event.seq in self._delivered_above:
            return True
        if event.WhichOneof("body") == "value":
            latest = self._latest_value_above.get(event.value.characteristic_id)
            return latest is not None and event.seq <= latest
        return False

    def _forget_up_to(self, seq: Optional[int]) -> None:
        if seq is None:
            self._delivered_above.clear()
            self._latest_value_above.clear()
            return
        self._delivered_above = {s for s in self._delivered_above if s > seq}
        self._latest_value_above = {c: s for c, s in self._latest_value_above.items() if s > seq}
