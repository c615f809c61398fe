"""Every async test runs on asyncio and on trio (anyio's pytest plugin).

A time-based test runs on both with a virtual clock: ``@on_mock_clock()`` (tests/unit/_support.py)
asks for the params "asyncio-mockclock" and "trio-mockclock", which are also its test ids.

Errors are built once: in every test, setting an attribute an ``A2AClientError`` already has
fails the test (``with_context`` makes a new error instead).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from a2a_anyio import A2AClientError
from tests.unit._support import anyio_backend_for

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str | tuple[str, dict[str, Any]]:
    return anyio_backend_for(str(request.param))


def _write_once(error: A2AClientError, name: str, value: Any) -> None:
    if name in vars(error):
        raise AssertionError(f"{type(error).__name__}.{name} changed after the error was built")
    Exception.__setattr__(error, name, value)


@pytest.fixture(autouse=True)
def _errors_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(A2AClientError, "__setattr__", _write_once)


_exporter: list[InMemorySpanExporter] = []


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The spans finished in the test: an exporter added once to the global tracer provider
    (set here, unless something set one before: it can be set only once). OpenTelemetry is
    imported by the tests that trace, not by every test."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if not _exporter:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        _exporter.append(exporter)
    [exporter] = _exporter
    exporter.clear()
    return exporter


_reader: list[InMemoryMetricReader] = []


@pytest.fixture
def metrics() -> InMemoryMetricReader:
    """What the test measured: a reader of the global meter provider, set here once (it can
    be set only once), whose every collection holds what was measured since the last one
    (delta temporality); emptied as the test starts."""
    from opentelemetry import metrics as otel_metrics
    from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
    from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader

    if not _reader:
        delta = AggregationTemporality.DELTA
        reader = InMemoryMetricReader(preferred_temporality={Counter: delta, Histogram: delta})
        otel_metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _reader.append(reader)
    [reader] = _reader
    reader.get_metrics_data()
    return reader
