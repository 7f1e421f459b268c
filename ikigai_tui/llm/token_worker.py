"""Exact token counts from a worker process, so that this one never builds tiktoken's
tables (core/tokens/encoders.py says why: the build holds the GIL 120-380 ms in one call).

`install()` makes every exact counter of this process count through a `RemoteEncoder`
(the full-screen app does it after its first frame). A RemoteEncoder starts its worker
on first use (a `python -I` running `main()` below): the worker builds the
encoding from the files in the litellm wheel (core/tokens/counter.py: load_encoding, never a
download), says `ready`, then answers requests on its stdin/stdout pipes, one at a time:

  request   <II n, size>  n x <I byte length>  the n texts, UTF-8 (surrogates passed)
  answer    <I n>  n x <q token count>

This process only waits on pipes meanwhile (the GIL is released) and packs or unpacks
bytes. A worker that dies (killed, out of memory) or stops answering is replaced once a
request; if the new one fails too, the encoding is built here after all (a freeze, but
the counts are right) and a warning logged. The worker ends when its stdin closes (this
process exits or closes the encoder).
"""

from __future__ import annotations

import logging
import os
import select
import struct
import subprocess
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

READY = b"ready\n"
START_TIMEOUT = 60.0  # building o200k takes ~0.5 s; a loaded machine, much longer
ANSWER_TIMEOUT = 120.0  # for one request (REQUEST_CHARS: ~20 ms)
# Characters in one request at most: a batch is sent in parts, each its own round trip
# (~60 us), so a count asked on the event loop meanwhile waits for one part, not the batch.
REQUEST_CHARS = 1 << 17
_HEAD = struct.Struct("<II")
_COUNT = struct.Struct("<I")
_SWAP = sys.byteorder != "little"


class WorkerError(Exception):
    """The worker died, said something else, or did not answer in time."""


def encode_request(texts: Sequence[str]) -> bytes:
    blobs = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = array("I", map(len, blobs))
    if _SWAP:
        lengths.byteswap()
    return b"".join((_HEAD.pack(len(blobs), sum(map(len, blobs))), lengths.tobytes(), *blobs))


def decode_counts(n: int, data: bytes) -> list[int]:
    counts = array("q")
    counts.frombytes(data)
    if _SWAP:
        counts.byteswap()
    if len(counts) != n:
        raise WorkerError(f"{len(counts)} counts for {n} texts")
    return counts.tolist()


class Worker:
    """One worker process and its pipes."""

    def __init__(self, name: str) -> None:
        import ikigai_tui

        # Isolated (-I: no current folder, no PYTHON* variables on the path), with the same
        # ikigai_tui as this process's first on it; its own session: no Ctrl-C from the
        # terminal (it ends when its stdin closes).
        root = str(Path(ikigai_tui.__file__).resolve().parent.parent)
        code = (f"import sys; sys.path.insert(0, {root!r}); "
                "from ikigai_tui.llm.token_worker import main; main()")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code, name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True, start_new_session=True)
        try:
            said = self._read(len(READY), START_TIMEOUT)
        except WorkerError:
            self.close()
            raise
        if said != READY:
            self.close()
            raise WorkerError(f"the worker said {said!r}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self, size: int, timeout: float) -> bytes:
        fd = self.proc.stdout.fileno()
        parts: list[bytes] = []
        left = size
        while left:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise WorkerError(f"no answer in {timeout:g} s")
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                raise WorkerError(f"the worker ended (status {self.proc.poll()})")
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    def counts(self, texts: Sequence[str]) -> list[int]:
        try:
            self.proc.stdin.write(encode_request(texts))
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:  # a broken pipe: the worker is gone
            raise WorkerError(f"the worker is gone: {exc}") from None
        (n,) = _COUNT.unpack(self._read(_COUNT.size, ANSWER_TIMEOUT))
        if n != len(texts):
            raise WorkerError(f"an answer for {n} texts, not {len(texts)}")
        return decode_counts(n, self._read(8 * n, ANSWER_TIMEOUT))

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass


class RemoteEncoder:
    """core/tokens/encoders.py's Encoder, counting in a worker process (started on first use)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()  # one request at a time on the pipes
        self._worker: Worker | None = None
        self._local = None  # the in-process encoder, when the workers failed
        self.started = 0  # workers started (a test's, a log's figure)
        with self._lock:
            self._start()

    def _start(self) -> None:
        self.started += 1
        self._worker = Worker(self.name)

    @property
    def pid(self) -> int | None:
        return self._worker.pid if self._worker is not None else None

    def count(self, text: str) -> int:
        return self.counts([text])[0] if text else 0

    def counts(self, texts: Sequence[str]) -> list[int]:
        out: list[int] = []
        start = 0
        while start < len(texts):
            end, size = start + 1, len(texts[start])
            while end < len(texts) and size + len(texts[end]) <= REQUEST_CHARS:
                size += len(texts[end])
                end += 1
            out.extend(self._counts(texts[start:end]))
            start = end
        return out

    def _counts(self, texts: Sequence[str]) -> list[int]:
        with self._lock:
            if self._local is None:
                for attempt in (1, 2):
                    try:
                        if self._worker is None:
                            self._start()
                        return self._worker.counts(texts)
                    except WorkerError as exc:
                        log.warning("token counting worker (%s): %s", self.name, exc)
                        self.close_worker()
                from ikigai_tui.core.tokens.encoders import LocalEncoder

                log.warning("token counting worker (%s) failed twice: counting here", self.name)
                self._local = LocalEncoder(self.name)
        return self._local.counts(texts)

    def close_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()

    def close(self) -> None:
        with self._lock:
            self.close_worker()


def make(name: str):
    """The encoder of `name` for core/tokens/encoders.py: counting in a worker process, or here
    when no worker can start (the failure is logged)."""
    try:
        return RemoteEncoder(name)
    except (OSError, WorkerError) as exc:
        log.warning("token counting worker (%s) did not start: %s; counting here", name, exc)
        from ikigai_tui.core.tokens.encoders import LocalEncoder

        return LocalEncoder(name)


def install() -> None:
    """Exact counts of this process from worker processes (nothing starts before one is
    needed: the offline model and estimated counts never start one)."""
    from ikigai_tui.core.tokens import encoders

    encoders.use(make)


# -- the worker ---------------------------------------------------------------------------


def _read_exact(stream, size: int) -> bytes | None:
    data = stream.read(size)
    if len(data) < size:
        return None  # the app closed the pipe (or ended): done
    return data


def serve(name: str, stdin, stdout) -> None:
    from ikigai_tui.core.tokens.encoders import LocalEncoder

    try:
        count = LocalEncoder(name).count
    except Exception as exc:  # noqa: BLE001  (said on the pipe: the app logs it)
        stdout.write(f"error: {exc}\n".encode()[:200])
        stdout.flush()
        return
    stdout.write(READY)
    stdout.flush()
    while True:
        head = _read_exact(stdin, _HEAD.size)
        if head is None:
            return
        n, size = _HEAD.unpack(head)
        lengths = array("I")
        lengths.frombytes(_read_exact(stdin, 4 * n) or b"")
        data = _read_exact(stdin, size) if size else b""
        if len(lengths) != n or data is None:
            return
        if _SWAP:
            lengths.byteswap()
        counts = array("q")
        at = 0
        for length in lengths:
            text = data[at:at + length].decode("utf-8", "surrogatepass")
            at += length
            counts.append(count(text) if text else 0)
        if _SWAP:
            counts.byteswap()
        stdout.write(_COUNT.pack(n) + counts.tobytes())
        stdout.flush()


def main() -> None:
    serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
