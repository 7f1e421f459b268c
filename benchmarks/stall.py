"""A loop-lag probe: the longest event-loop stall while something runs.

A task on the running loop sleeps 5 ms at a time; every wake-up later than asked for is a
stall, as long as the lateness (the loop was busy with something else all that time: a
frame, a key, a synchronous import...). The probe runs on the loop it is started from, so
start it from a coroutine on the app's own loop (under `app.run_test()`, or in a worker /
callback of the app).

    async with LagProbe() as probe:
        ...                       # the scenario
    probe.longest_ms              # the longest stall, ms (0.0 if none)
    probe.stalls                  # every late wake-up: (seconds since start, ms late)

or, when start and end are not in one block: `probe = LagProbe().start()` ...
`await probe.stop()`. A probe can be restarted (its records are cleared).

Only wake-ups later than `floor_ms` (1 ms: the scheduler's own jitter) are recorded. A
wake-up still pending when the probe stops counts too (the loop may have been blocked
right up to the stop).
"""

from __future__ import annotations

import asyncio
import time

perf = time.perf_counter
TICK = 0.005


class LagProbe:
    def __init__(self, tick: float = TICK, floor_ms: float = 1.0) -> None:
        self.tick = tick
        self.floor_ms = floor_ms
        self.stalls: list[tuple[float, float]] = []
        self.wakeups = 0
        self._task: asyncio.Task | None = None
        self._t0 = 0.0
        self._due = 0.0

    # -- results ------------------------------------------------------------------------

    @property
    def longest_ms(self) -> float:
        return max((ms for _, ms in self.stalls), default=0.0)

    def over(self, ms: float) -> list[tuple[float, float]]:
        """The stalls longer than `ms`."""
        return [s for s in self.stalls if s[1] > ms]

    def __repr__(self) -> str:
        return (f"LagProbe(longest={self.longest_ms:.1f} ms, stalls={len(self.stalls)}, "
                f"wakeups={self.wakeups})")

    # -- running ------------------------------------------------------------------------

    def start(self) -> LagProbe:
        if self._task is not None:
            raise RuntimeError("the probe is already running")
        self.stalls, self.wakeups = [], 0
        self._t0 = perf()
        self._due = self._t0 + self.tick
        self._task = asyncio.get_running_loop().create_task(self._run(), name="lag-probe")
        return self

    async def stop(self) -> LagProbe:
        task, self._task = self._task, None
        if task is None:
            return self
        self._note(perf())  # a wake-up still pending: blocked up to now
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return self

    async def __aenter__(self) -> LagProbe:
        return self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def _note(self, now: float) -> None:
        late_ms = (now - self._due) * 1000
        if late_ms > self.floor_ms:
            self.stalls.append((self._due - self._t0, late_ms))

    async def _run(self) -> None:
        while True:
            self._due = perf() + self.tick
            await asyncio.sleep(self.tick)
            self.wakeups += 1
            self._note(perf())


def figure(name: str, ms: float, goal_ms: float, details: str = "") -> str:
    """A figure line: `name: measured (goal) ok|miss   [details]`."""
    verdict = "ok" if ms <= goal_ms else "miss"
    tail = f"   [{details}]" if details else ""
    return f"{name}: {ms:.0f} ms (<= {goal_ms:.0f} ms) {verdict}{tail}"


if __name__ == "__main__":  # a self-check: a 60 ms block is seen as a ~60 ms stall
    async def _demo() -> None:
        async with LagProbe() as probe:
            await asyncio.sleep(0.05)
            time.sleep(0.06)
            await asyncio.sleep(0.02)
        print(probe)

    asyncio.run(_demo())
