"""GetHome in pages, put back together: the part of ``get_home`` that does not
depend on how a call is made, so that the synchronous and the asyncio clients
share it.

    pages = HomePages(home_id, page_size)
    request = pages.request()
    while request is not None:
        try:
            request = pages.take(client.call("GetHome", request))
        except HomedError as error:
            request = pages.refused(error)  # the same page, smaller; or raises
    return pages.home
"""

from __future__ import annotations

from . import proto as pb
from .errors import HomedError, InvalidArgument


class HomePages:
    """The pages of one GetHome snapshot, merged into one GetHomeResponse. The
    first page carries every home with all its tables; later pages add
    accessories to the homes it named, and must be cut from the same snapshot
    (one seq, one journal)."""

    def __init__(self, home_id: int = 0, page_size: int = 256):
        self.home_id = home_id
        self.page_size = page_size
        self.token = ""
        self.home = None

    def request(self):
        """The request for the next page."""
        return pb.GetHomeRequest(home_id=self.home_id, page_size=self.page_size, page_token=self.token)

    def shrink(self) -> bool:
        """After RESOURCE_EXHAUSTED (a page larger than a frame): halve the page
        size and say whether asking again can help."""
        if self.page_size <= 1:
            return False
        self.page_size //= 2
        return True

    def take(self, page):
        """Takes in one page; returns the request for the next, None once the
        last has come (then ``home`` is whole)."""
        return None if self.add(page) else self.request()

    def refused(self, error: HomedError):
        """A page was refused with ``error``: the request to make instead (half
        as large, after RESOURCE_EXHAUSTED: larger than a frame). Raises
        ``error`` when asking again cannot help."""
        if error.code == pb.RESOURCE_EXHAUSTED and self.shrink():
            return self.request()
        raise error

    def add(self, page) -> bool:
        """Takes in one page; True once the last has come (then ``home`` is whole)."""
        if self.home is None:
            self.home = page
        else:
            if (page.seq, page.journal_id) != (self.home.seq, self.home.journal_id):
                raise InvalidArgument(f"a GetHome page at seq {page.seq} follows pages at seq {self.home.seq}")
            homes = {h.id: h for h in self.home.homes}
            for part in page.homes:
                if part.id not in homes:
                    raise InvalidArgument(f"a GetHome page names home {part.id}, which the first page did not")
                homes[part.id].accessories.extend(part.accessories)
        self.token = page.next_page_token
        if self.token:
            return False
        self.home.next_page_token = ""
        return True
