"""``--timeout`` means what a library timeout means: seconds, positive and finite, with ``0``
the command line's spelling of the library's ``None`` (no limit); anything else is a usage
error (exit 2) before any agent is called."""

from __future__ import annotations

import pytest

from a2a_anyio.cli import main
from a2a_anyio.cli._grammar import build_parser


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "five", ""])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-a", "http://127.0.0.1:9", "--timeout", value, "card"]) == 2
    err = capsys.readouterr().err
    assert "argument --timeout:" in err and "seconds" in err


def test_zero_is_no_limit_and_seconds_are_seconds() -> None:
    parser = build_parser()
    assert parser.parse_args(["--timeout", "0", "card"]).timeout == 0  # no limit: None below
    assert parser.parse_args(["--timeout", "2.5", "card"]).timeout == 2.5
    assert parser.parse_args(["card"]).timeout is None  # the client's default, 30 s
