"""Unit tests: no network, no real server."""
