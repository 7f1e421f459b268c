"""The running fake provider for the tests in this folder."""

from __future__ import annotations

import pytest

from tests.fakes.server import FakeProvider


@pytest.fixture
def fake():
    with FakeProvider() as f:
        yield f
