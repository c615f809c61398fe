"""``agents import URL``: an AI Catalog's A2A agents into the registry, hostile entries
refused one by one (the reader on its own, and the command run as a process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from a2a_anyio import A2ADiscoveryError, AgentRegistry
from a2a_anyio._catalog import (
    A2A_CARD_TYPE,
    MAX_CATALOG_BYTES,
    MAX_CATALOG_ENTRIES,
    catalog_url,
    read_catalog,
)
from a2a_anyio.testing import FakeAgent

from .conftest import FileServer, run

pytestmark = pytest.mark.anyio

SOURCE = "https://agents.example.com/.well-known/ai-catalog.json"


def entry(identifier: str, url: str | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"identifier": identifier, "type": A2A_CARD_TYPE, **more}
    if url is not None:
        out["url"] = url
    return out


def test_hostile_entries_are_refused_each_with_its_reason() -> None:
    inline = FakeAgent(name="Inline Agent", description="Given inline").card(
        "https://inline.example.com"
    )
    doc = {
        "specVersion": "1.0",
        "host": {"displayName": "Example\x1b[2J Corp"},
        "entries": [
            entry("urn:air:example.com:a2a:research", "https://a.example.com/agent-card.json"),
            entry("urn:x:1", "file:///etc/passwd"),
            entry("urn:x:2", "javascript:alert(1)"),
            entry("urn:x:3", "https://b.example.com/card.json", data={}),
            entry("urn:x:4"),
            "not an entry",
            {"type": A2A_CARD_TYPE, "url": "https://c.example.com/"},
            entry("urn:x:5", data={"name": "broken"}),
            {"identifier": "urn:x:mcp", "type": "application/mcp-server-card+json", "url": "x"},
            {"identifier": "urn:x:n", "type": "application/ai-catalog+json", "url": "https://n/"},
            entry("urn:air:example.com:a2a:research", "https://a.example.com/again"),
            entry("urn:x:inline", data=inline),
            entry(
                "urn:x:named",
                "https://d.example.com/",
                displayName="../../Strict Agent!",
                tags=["sdk", "bad tag", 3],
                description="  many\n words  ",
            ),
            entry("urn:x:known", "https://known.example.com/"),
        ],
    }
    found = read_catalog(
        doc, source=SOURCE, names=["research"], urls={"https://known.example.com/": "known"}
    )
    assert found.host == "Example\x1b[2J Corp"
    assert [(a.name, a.url) for a in found.agents] == [
        ("research-2", "https://a.example.com/agent-card.json"),
        ("inline-agent", "https://inline.example.com/a2a"),
        ("strict-agent", "https://d.example.com/"),
    ]
    assert found.agents[1].description == "Given inline"
    assert found.agents[2].tags == ("sdk",)
    assert found.agents[2].description == "many words"
    reasons = {p.where: p.why for p in found.refused}
    assert reasons == {
        "entries[1] ('urn:x:1')": "url 'file:///etc/passwd' is not an absolute http(s) URL",
        "entries[2] ('urn:x:2')": "url 'javascript:alert(1)' is not an absolute http(s) URL",
        "entries[3] ('urn:x:3')": "an entry has exactly one of url and data",
        "entries[4] ('urn:x:4')": "an entry has exactly one of url and data",
        "entries[5]": "an entry is an object, not 'not an entry'",
        "entries[6]": "no identifier (a non-empty string)",
        "entries[7] ('urn:x:5')": reasons["entries[7] ('urn:x:5')"],
        "entries[10] ('urn:air:example.com:a2a:research')": (
            "the identifier (and version) of an entry before it"
        ),
    }
    assert reasons["entries[7] ('urn:x:5')"].startswith("the inline card cannot be read: ")
    assert [str(p) for p in found.skipped] == [
        "entries[8] ('urn:x:mcp'): type 'application/mcp-server-card+json': not A2A",
        "entries[9] ('urn:x:n'): type 'application/ai-catalog+json': nested catalogs are not "
        "followed",
        "entries[13] ('urn:x:known'): already in the registry as known",
    ]


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ([], "is not an AI Catalog"),
        ({"entries": []}, "is not an AI Catalog"),
        ({"specVersion": "2.0", "entries": []}, "specVersion '2.0' is not one this reader knows"),
        ({"specVersion": 1, "entries": []}, "specVersion 1 is not one"),
        ({"specVersion": "1.0", "entries": {}}, "entries is not an array"),
        (
            {"specVersion": "1.0", "entries": [{}] * (MAX_CATALOG_ENTRIES + 1)},
            f"lists {MAX_CATALOG_ENTRIES + 1} entries, more than {MAX_CATALOG_ENTRIES}",
        ),
    ],
)
def test_a_document_that_is_no_catalog_is_refused_whole(doc: Any, says: str) -> None:
    with pytest.raises(A2ADiscoveryError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_catalog(doc, source=SOURCE)


def test_an_origin_means_its_well_known_catalog() -> None:
    assert (
        catalog_url("https://h.example.com") == "https://h.example.com/.well-known/ai-catalog.json"
    )
    assert (
        catalog_url("https://h.example.com/") == "https://h.example.com/.well-known/ai-catalog.json"
    )
    assert catalog_url("https://h.example.com/c/ai.json") == "https://h.example.com/c/ai.json"


async def test_import_prints_writes_and_skips_what_the_registry_has(
    anyio_backend: str, tmp_path: Path, strict_server: str, compat_server: str
) -> None:
    catalog = {
        "specVersion": "1.0",
        "host": {"displayName": "Local agents"},
        "entries": [
            entry("urn:air:localhost:a2a:strict", strict_server, tags=["sdk"]),
            entry("urn:air:localhost:a2a:compat", compat_server, displayName="Compat"),
            entry("urn:x:evil", "file:///etc/passwd"),
        ],
    }
    server = FileServer()
    server.files["/.well-known/ai-catalog.json"] = (
        200, json.dumps(catalog).encode(), {"Content-Type": "application/ai-catalog+json"},
    )  # fmt: skip
    server.files["/big.json"] = (200, b" " * (MAX_CATALOG_BYTES + 1), {})
    registry = tmp_path / "agents.yaml"
    registry.write_text("# my agents\nagents:\n  - name: mine\n    url: http://127.0.0.1:9\n")
    config = ("--config", str(registry))
    async with server.serve():
        printed = await run(anyio_backend, *config, "agents", "import", server.url)
        written = await run(anyio_backend, *config, "agents", "import", server.url, "--write")
        again = await run(
            anyio_backend, *config, "-o", "json", "agents", "import", server.url, "--write"
        )
        big = await run(anyio_backend, *config, "agents", "import", f"{server.url}/big.json")
    for result in (printed, written, again):
        assert result.code == 0, result.err
        assert "refused entries[2] ('urn:x:evil'): url 'file:///etc/passwd'" in result.err
    assert yaml.safe_load(printed.out) == {
        "agents": [
            {"name": "strict", "url": strict_server, "tags": ["sdk"]},
            {"name": "compat", "url": compat_server},
        ]
    }
    assert "2 agents in the catalog of Local agents; add them to the registry with --write" in (
        printed.err
    )
    assert written.out.splitlines() == [
        f"Added: strict ({strict_server})",
        f"Added: compat ({compat_server})",
    ]
    assert "its comments are not kept" in written.err
    loaded = AgentRegistry.from_file(registry)
    assert loaded.names() == ["mine", "strict", "compat"]
    assert [e.name for e in loaded.group("sdk")] == ["strict"]
    doc = again.json()
    assert doc["agents"] == [] and doc["written"] is None
    assert [s["reason"] for s in doc["skipped"]] == [
        "already in the registry as strict",
        "already in the registry as compat",
    ]
    assert big.code == 1
    assert f"over {MAX_CATALOG_BYTES} bytes" in big.err
    # The imported agents answer: the registry names them.
    env_run = await run(anyio_backend, "--config", str(registry), "-a", "strict", "send", "hello")
    assert env_run.code == 0, env_run.err
