from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import MOCK_BIN, WASM, ENVOY_BIN, Envoy, Mock  # noqa: E402


def pytest_sessionstart(session):
    missing = [str(p) for p in (MOCK_BIN, WASM, ENVOY_BIN) if not p.exists()]
    if missing:
        pytest.exit("missing build outputs (run `make test`, which builds first): " + ", ".join(missing), 2)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def mock(workdir):
    m = Mock(workdir)
    yield m
    m.stop()


@pytest.fixture(scope="module")
def envoy(workdir, mock):
    e = Envoy(workdir, mock.port)
    yield e
    e.stop()


@pytest.fixture(autouse=True)
def clean_mock(request):
    if "mock" in request.fixturenames:
        request.getfixturevalue("mock").reset()
    yield
