"""The ``a2a-anyio`` command line (needs the ``cli`` extra: rich, PyYAML).

``main(argv)`` runs it and returns the exit status: 0 success, 1 failure, 2 usage or
configuration error, 3 unreachable, 4 authentication, 5 timeout, 130 interrupted, 141 its
output's reader went away (a closed pipe).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``a2a-anyio`` with ``argv`` (default: the process's arguments)."""
    try:
        from a2a_anyio.cli._app import main as run
    except ImportError as exc:
        if exc.name not in ("rich", "yaml"):
            raise
        from a2a_anyio._errors import install_extra

        sys.stderr.write(f"a2a-anyio: the command line needs {exc.name}: {install_extra('cli')}\n")
        return 1
    # --insecure prints its own note; the library's warning would say it a second time.
    warnings.filterwarnings("ignore", "TLS certificates are not verified", UserWarning)
    return run(argv)


__all__ = ["main"]
