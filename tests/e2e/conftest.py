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


@pytest.fixture(scope="module")
def mock_b(workdir):
    """A second mock provider, behind the shipped config's cluster `llm_b`."""
    m = Mock(workdir)
    yield m
    m.stop()


@pytest.fixture(autouse=True)
def clean_mock_b(request):
    if "mock_b" in request.fixturenames:
        request.getfixturevalue("mock_b").reset()
    yield


@pytest.fixture
def two_providers(workdir, mock, mock_b):
    """Starts Envoys of their own (fresh health state) in front of both mock providers."""
    envoys = []

    def start(edit=lambda t: t, concurrency: int = 2, second: int | None = None):
        e = Envoy(workdir, mock.port, second_upstream_port=second or mock_b.port, edit=edit,
                  concurrency=concurrency)
        envoys.append(e)
        return e

    yield start
    for e in envoys:
        e.stop()
