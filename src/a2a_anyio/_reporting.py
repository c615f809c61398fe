"""How a client reports, made from its options: its logger, and the tracing ``tracing=``
chooses (OpenTelemetry's, loaded only for a client that traces)."""

from __future__ import annotations

import logging

from a2a_anyio._errors import install_extra
from a2a_anyio._observe import LOGGER, NO_TRACING, Observer, Tracing


def tracing_for(enabled: bool) -> Tracing:
    """The tracing of a client made with ``tracing=enabled``.

    Raises:
        ImportError: ``enabled`` and OpenTelemetry is not installed.
    """
    if not enabled:
        return NO_TRACING
    try:
        from a2a_anyio._tracing import OtelTracing
    except ImportError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        raise ImportError(
            f"tracing=True needs OpenTelemetry: {install_extra('otel')}", name=exc.name
        ) from exc
    return OtelTracing()


def observer(logger: logging.Logger | None, tracing: bool) -> Observer:
    """The observer of a client made with ``logger=`` and ``tracing=``.

    Raises:
        ImportError: ``tracing`` and OpenTelemetry is not installed.
    """
    return Observer(logger if logger is not None else LOGGER, tracing_for(tracing))
