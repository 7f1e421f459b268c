"""Did a Gemini stream say why it ended? litellm 1.105.3 (pinned) cannot tell: its Gemini
parser gives every chunk finish_reason "stop" whether or not the provider sent a
finishReason. So the response bytes are watched on their way through litellm's own HTTP
client (an httpx response hook, passed as `client=`), without buffering them.

Imported after litellm (it imports httpx, ~130 ms).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable

import httpx

# A finishReason key with a string value. In JSON a raw quote is always structural (quotes
# inside strings are escaped), so this cannot match inside the reply's text.
_FINISH = re.compile(rb'"finishReason"\s*:\s*"([A-Z_]+)"')
_UNSPECIFIED = b"FINISH_REASON_UNSPECIFIED"  # Gemini's "not finished yet"
_OVERLAP = 64  # bytes kept from one network piece to the next, for a key split across them


class FinishWatch:
    """One per request: pass `client` to litellm.acompletion, read `seen` at the end,
    then `await close()`."""

    def __init__(self, timeout: float) -> None:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        self.seen = False
        self._tail = b""
        self.client = AsyncHTTPHandler(timeout=timeout, event_hooks={
            "request": [self._uncompressed], "response": [self._attach]})

    @staticmethod
    async def _uncompressed(request: httpx.Request) -> None:
        # The hook sees the raw body: gzip'd bytes would hide every finishReason and
        # flag each complete reply as cut. SSE text is small; ask for it plain.
        request.headers["Accept-Encoding"] = "identity"

    async def _attach(self, response: httpx.Response) -> None:
        response.stream = _TappedStream(response.stream, self.feed)

    def feed(self, data: bytes) -> None:
        if self.seen:
            return
        joined = self._tail + data
        for found in _FINISH.finditer(joined):
            if found.group(1) != _UNSPECIFIED:
                self.seen = True
                return
        self._tail = joined[-_OVERLAP:]

    async def close(self) -> None:
        try:
            await self.client.close()
        except Exception:  # closing is best effort: the reply is already handled
            pass


class _TappedStream(httpx.AsyncByteStream):
    """An httpx response body that shows each piece to `feed` on its way through."""

    def __init__(self, inner: httpx.AsyncByteStream, feed: Callable[[bytes], None]) -> None:
        self._inner = inner
        self._feed = feed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for data in self._inner:
            self._feed(data)
            yield data

    async def aclose(self) -> None:
        await self._inner.aclose()
