"""``python -m a2a_anyio.cli``: the a2a-anyio command line."""

from a2a_anyio.cli import main

raise SystemExit(main())
