"""The reference stays complete: every public name is on the API page and has a docstring that
says what it does; every operation that can fail says what it raises; the tables of options
list what the code accepts.

Docstrings are read as the site reads them (griffe, statically), so an attribute such as
``StreamEvent`` counts only with a docstring the site can show.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from typing import Any

import griffe
import pytest

from a2a_anyio import A2AClient
from a2a_anyio._dialects.card import PROTOCOLS

from .blocks import DOCS, ROOT

PUBLIC_MODULES = ("a2a_anyio", "a2a_anyio.testing", "a2a_anyio.push", "a2a_anyio.cli")
API_PAGE = DOCS / "api.md"

# Where failures happen at run time: each public method or function of these says what it
# raises (a Google-style "Raises:" section, shown as a table on the site).
RAISING_CLASSES = {
    "A2AClient", "MessageStream", "SyncA2AClient", "SyncMessageStream", "AgentPool",
    "SyncAgentPool", "MergedStreams", "AgentRegistry", "AgentCardFetcher", "CardVerifier",
    "FakeAgent", "PushReceiver", "RetryPolicy", "AgentTool", "SyncAgentTool", "PushVerifier",
}  # fmt: skip
# Their members that cannot fail: accessors and local bookkeeping.
CANNOT_FAIL = {
    "A2AClient.close", "A2AClient.closed", "A2AClient.capabilities", "A2AClient.agent_card",
    "SyncA2AClient.close", "SyncA2AClient.closed", "SyncA2AClient.async_client",
    "SyncA2AClient.url", "SyncA2AClient.endpoint", "SyncA2AClient.agent_card",
    "SyncA2AClient.capabilities",
    "MessageStream.task", "MessageStream.message", "MessageStream.events",
    "MessageStream.finished", "MessageStream.resumes", "MessageStream.aclose",
    "MessageStream.cancel_on_exit", "MessageStream.cancel_outcome", "MessageStream.cancel_guard",
    "SyncMessageStream.stream", "SyncMessageStream.task", "SyncMessageStream.message",
    "SyncMessageStream.events", "SyncMessageStream.finished", "SyncMessageStream.close",
    "SyncMessageStream.cancel_outcome", "SyncMessageStream.cancel_on_exit",
    "AgentPool.http_client", "AgentPool.aclose",
    "SyncAgentPool.async_pool", "SyncAgentPool.closed", "SyncAgentPool.close",
    "AgentRegistry.names", "AgentRegistry.list", "AgentRegistry.get", "AgentRegistry.group_names",
    "AgentRegistry.default_paths",
    "AgentCardFetcher.card_url", "AgentCardFetcher.invalidate",
    "FakeAgent.url", "FakeAgent.rpc_url", "FakeAgent.rest_url", "FakeAgent.card_url",
    "FakeAgent.is_running", "FakeAgent.closing", "FakeAgent.requests_for",
    "FakeAgent.clear_requests", "FakeAgent.clear_faults", "FakeAgent.take_faults",
    "FakeAgent.tasks", "FakeAgent.streams", "FakeAgent.transport", "FakeAgent.card",
    "FakeAgent.rate_limit", "FakeAgent.spawn", "FakeAgent.running",
    "PushReceiver.add_task_handler", "PushReceiver.expect", "PushReceiver.forget",
    "PushReceiver.transport", "PushReceiver.url", "PushReceiver.subscribe",
    "CardVerifier.jwks_requests", "PushVerifier.jwks_requests",
    "RetryPolicy.delay", "RetryPolicy.should_retry",
    "AgentTool.name", "AgentTool.description", "AgentTool.parameters", "AgentTool.card",
    "AgentTool.to_openai", "AgentTool.to_anthropic", "AgentTool.to_mcp", "AgentTool.result",
    "SyncAgentTool.result",
    "SyncAgentTool.tool", "SyncAgentTool.name", "SyncAgentTool.description",
    "SyncAgentTool.parameters", "SyncAgentTool.card", "SyncAgentTool.to_openai",
    "SyncAgentTool.to_anthropic", "SyncAgentTool.to_mcp",
    "a2a_anyio.cli.main",  # every failure becomes an exit status
    "a2a_anyio.no_retry_delays",
}  # fmt: skip


def _public_names() -> Iterator[tuple[str, str]]:
    for module in PUBLIC_MODULES:
        for name in importlib.import_module(module).__all__:
            if name != "__version__":
                yield module, name


@pytest.fixture(scope="module")
def package() -> Any:
    return griffe.load("a2a_anyio", search_paths=[str(ROOT / "src")])


def _resolve(package: Any, module: str, name: str) -> Any:
    obj = package if module == "a2a_anyio" else package[module.split(".", 1)[1]]
    found = obj[name]
    return found.final_target if found.is_alias else found


def _members(obj: Any) -> Iterator[tuple[str, Any]]:
    """The public methods and properties of a class, its own and inherited (not fields)."""
    for name, member in obj.all_members.items():
        if name.startswith("_"):
            continue
        member = member.final_target if member.is_alias else member
        if member.is_function or "property" in member.labels:
            yield name, member


def test_every_public_name_is_on_the_api_page() -> None:
    page = API_PAGE.read_text()
    shown = set(re.findall(r"^::: ([\w.]+)$", page, flags=re.MULTILINE))
    missing = [f"{m}.{n}" for m, n in _public_names() if f"{m}.{n}" not in shown]
    assert missing == [], "add them to docs/api.md"


def test_every_public_name_has_a_docstring(package: Any) -> None:
    missing = []
    for module, name in _public_names():
        obj = _resolve(package, module, name)
        if not obj.docstring:
            missing.append(f"{module}.{name}")
        if obj.is_class:
            missing += [f"{name}.{m}" for m, member in _members(obj) if not member.docstring]
    assert missing == []


def _raises(docstring: Any) -> bool:
    return docstring is not None and re.search(r"^Raises:\s*$", docstring.value, re.M) is not None


def test_what_can_fail_says_what_it_raises(package: Any) -> None:
    silent = []
    for module, name in _public_names():
        obj = _resolve(package, module, name)
        key = f"{module}.{name}"
        if obj.is_function and key not in CANNOT_FAIL and not _raises(obj.docstring):
            silent.append(key)
        if obj.is_class and name in RAISING_CLASSES:
            for member_name, member in _members(obj):
                key = f"{name}.{member_name}"
                if key not in CANNOT_FAIL and not _raises(member.docstring):
                    silent.append(key)
    assert silent == [], "add a 'Raises:' section (or list the name in CANNOT_FAIL)"
    known = {f"{m}.{n}" for m, n in _public_names()}
    for module, name in _public_names():
        obj = _resolve(package, module, name)
        if obj.is_class:
            known.update(f"{name}.{member}" for member, _ in _members(obj))
    assert CANNOT_FAIL - known == set(), "CANNOT_FAIL names what does not exist"


def _table_row(text: str, first_cell: str) -> str:
    for line in text.splitlines():
        if line.startswith(f"| {first_cell} |"):
            return line
    raise AssertionError(f"no table row for {first_cell}")


def test_the_options_table_has_every_client_option() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Options") :]
    section = section[: section.index("\n\n", section.index("| option |"))]
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    named = set(re.findall(r"`(\w+)`", " ".join(first_cells)))
    options = set(inspect.signature(A2AClient).parameters) - {"url"}
    assert options - named == set()


@pytest.mark.parametrize(
    ("page", "row"),
    [("README.md", "`protocol`"), ("docs/cli.md", "`protocol`")],
)
def test_protocol_rows_list_every_value(page: str, row: str) -> None:
    line = _table_row((ROOT / page).read_text(), row)
    for value in PROTOCOLS:
        assert f"`{value}`" in line or f'`"{value}"`' in line, (page, value)
