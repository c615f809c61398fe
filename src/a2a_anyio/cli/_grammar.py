"""The command-line grammar: argparse parsers, options, their checks and defaults."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import textwrap
from typing import Any, NoReturn

from a2a_anyio import __version__
from a2a_anyio._http import check_url
from a2a_anyio._model import TaskState
from a2a_anyio.cli import _auth_cmd
from a2a_anyio.cli import _commands as cmd
from a2a_anyio.cli import _completion as completion
from a2a_anyio.cli import _config as config
from a2a_anyio.cli import _conformance as conformance
from a2a_anyio.cli import _import as importing
from a2a_anyio.cli import _many as many
from a2a_anyio.cli import _mcp as mcp
from a2a_anyio.cli._chat import chat
from a2a_anyio.cli._errors import UsageError

PROG = "a2a-anyio"

DESCRIPTION = """\
Talk to A2A (Agent2Agent) agents from the shell: read their cards, send messages, follow
and manage tasks, call any JSON-RPC method, and fan one message out to many agents.

An agent is named with -a/--agent: a URL (its base URL or its card's URL), a card file,
or the name of an agent or group from the registry file (see 'a2a-anyio agents')."""

EPILOG = """\
examples:
  a2a-anyio -a http://localhost:8000 card
  a2a-anyio -a http://localhost:8000 send "hello"
  a2a-anyio -a local send --stream -o json "write a report"
  a2a-anyio -a local send --task-id TASK_ID "the answer"
  a2a-anyio chat http://localhost:8000
  a2a-anyio -a local task get TASK_ID
  a2a-anyio -a reviewers fan-out "review this change"
  a2a-anyio --endpoint http://localhost:8000/rpc call tasks/get --params '{"id": "t1"}'

output:
  Data goes to stdout, diagnostics to stderr. -o json prints exactly one JSON document
  (the A2A protocol's own objects); with --stream it prints JSON Lines, one event a line.
  On a terminal, text output uses colours, tables and live views; piped, it is plain
  'Label: value' lines.

exit status:
  0 success (a task that ended failed or waits for input is a result, not a failure)
  1 failure   2 usage or configuration error   3 agent unreachable or no card
  4 authentication refused or missing           5 timeout

environment:
  A2A_ANYIO_AGENT, A2A_ANYIO_BEARER, A2A_ANYIO_API_KEY  defaults of -a, --bearer, --api-key
  A2A_ANYIO_CONFIG  the registry file (else ./agents.yaml, ~/.config/a2a-anyio/agents.yaml)"""

_APPEND = ("agent", "header", "cookie")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises ``UsageError`` instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, parser=self)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=min(100, _columns()))

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):  # the commands, without a header
            return "".join(
                super(_Formatter, self)._format_action(a) for a in action._get_subactions()
            )
        return super()._format_action(action)


def _columns() -> int:
    return shutil.get_terminal_size((100, 24)).columns


# -- global options ------------------------------------------------------------------------


def _global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command accepts, before or after its name.

    On the top parser they carry the defaults; on a command's parser they are suppressed when
    absent, so a value given before the command survives, and lists given in both places add up.
    """

    def dflt(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    def dest(name: str) -> str:
        return name if top or name not in _APPEND else f"{name}_late"

    g = parser.add_argument_group(
        "global options" if top else "global options (also accepted before the command)"
    )
    g.add_argument(
        "-a", "--agent", dest=dest("agent"), action="append", metavar="AGENT",
        default=dflt(None),
        help="the agent: URL, card URL, card file, or registry name or group; repeat it for "
        "fan-out, ping and mcp (alias --agent-card) [$A2A_ANYIO_AGENT]",
    )  # fmt: skip
    g.add_argument(
        "--agent-card", dest=dest("agent"), action="append", default=dflt(None),
        help=argparse.SUPPRESS,
    )  # fmt: skip
    g.add_argument(
        "--endpoint", metavar="URL", default=dflt(None),
        help="a JSON-RPC URL to call directly, without reading a card (a service at a custom path)",
    )  # fmt: skip
    g.add_argument(
        "--config", metavar="FILE", default=dflt(None),
        help="the registry file (default: $A2A_ANYIO_CONFIG, ./agents.yaml, "
        "~/.config/a2a-anyio/agents.yaml; .toml works too)",
    )  # fmt: skip
    g.add_argument(
        "--bearer", metavar="TOKEN", default=dflt(None),
        help="send 'Authorization: Bearer TOKEN' [$A2A_ANYIO_BEARER]",
    )  # fmt: skip
    g.add_argument(
        "--api-key", metavar="KEY", default=dflt(None),
        help="send the key as the X-API-Key header (use --header for another name) "
        "[$A2A_ANYIO_API_KEY]",
    )  # fmt: skip
    g.add_argument(
        "--header", dest=dest("header"), action="append", metavar="'NAME: VALUE'",
        default=dflt(None), help="an extra request header, repeatable (alias --svc-param)",
    )  # fmt: skip
    g.add_argument(
        "--svc-param", dest=dest("header"), action="append", default=dflt(None),
        help=argparse.SUPPRESS,
    )  # fmt: skip
    g.add_argument(
        "--cookie", dest=dest("cookie"), action="append", metavar="NAME=VALUE",
        default=dflt(None), help="a cookie to send (repeatable)",
    )  # fmt: skip
    g.add_argument(
        "--insecure", action="store_true", default=dflt(False),
        help="do not verify TLS certificates (development only)",
    )  # fmt: skip
    g.add_argument(
        "--network-policy", choices=("off", "strict"), metavar="POLICY", default=dflt(None),
        help="strict: refuse URLs a card or a redirect gives that reach loopback, private or "
        "link-local addresses the agent's own URL does not, and pin each request to the "
        "address checked; off (default)",
    )  # fmt: skip
    g.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS", default=dflt(None),
        help="give up after this long: each call, a stream, a wait (0: no limit; "
        "default: 30 s a call, streams unbounded)",
    )  # fmt: skip
    for flag, hidden in (("--protocol", False), ("--a2a-version", True)):
        g.add_argument(
            flag, dest="protocol", choices=("auto", "1.0", "0.3", "0.2", "legacy"),
            metavar="VERSION", default=dflt(None),
            help=argparse.SUPPRESS if hidden else "the A2A version to speak: auto (default: "
            "the best the card offers), 1.0, 0.3, 0.2 or legacy (alias --a2a-version)",
        )  # fmt: skip
    for flag, hidden in (("--binding", False), ("--transport", True)):
        g.add_argument(
            flag, dest="binding", type=_binding, metavar="BINDING", default=dflt(None),
            help=argparse.SUPPRESS if hidden else "preferred binding, jsonrpc, rest or grpc; "
            "the others are the fallbacks (alias --transport)",
        )  # fmt: skip
    g.add_argument(
        "-o", "--output", choices=("text", "json"), metavar="FORMAT", default=dflt("text"),
        help="text (default) or json: one JSON document, or JSON Lines with --stream",
    )  # fmt: skip
    g.add_argument(
        "--debug", action="store_true", default=dflt(False),
        help="diagnostics on stderr: requests, answers, retries, tracebacks (secrets redacted)",
    )  # fmt: skip
    g.add_argument(
        "--backend", choices=("asyncio", "trio"), metavar="LOOP", default=dflt("asyncio"),
        help="the event loop to run on: asyncio (default) or trio",
    )  # fmt: skip


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not math.isfinite(seconds):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}")
    if seconds < 0:
        raise argparse.ArgumentTypeError("seconds cannot be negative")
    return seconds


def _url(value: str) -> str:
    try:
        return check_url(value, "the URL")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return number


def _port(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("a port is 0 (any free one) to 65535")
    return number


def _binding(value: str) -> str:
    norm = {
        "jsonrpc": "jsonrpc", "json-rpc": "jsonrpc", "rest": "rest", "http+json": "rest",
        "grpc": "grpc",
    }  # fmt: skip
    try:
        return norm[value.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"must be jsonrpc, rest or grpc, not {value!r}") from None


# -- message parts, in the order given ------------------------------------------------------


class _PartAction(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parts = list(getattr(namespace, "parts", None) or [])
        parts.append([self.const, values, None])
        namespace.parts = parts


class _MediaTypeAction(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parts = getattr(namespace, "parts", None)
        if not parts:
            parser.error("--media-type sets the type of the --text, --data or --file before it")
        parts[-1][2] = values


def _message_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", metavar="TEXT", help="the message's text")
    g = p.add_argument_group("message parts (repeatable, kept in order)")
    g.add_argument(
        "--text", dest="parts", action=_PartAction, const="text", metavar="TEXT",
        help="a text part",
    )  # fmt: skip
    g.add_argument(
        "--data", dest="parts", action=_PartAction, const="data", metavar="JSON",
        help="a data part: inline JSON, @FILE or a .json file's path, or - for stdin",
    )  # fmt: skip
    g.add_argument(
        "--file", dest="parts", action=_PartAction, const="file", metavar="PATH|URL",
        help="a file part: a local file (sent inline) or a URL (sent by reference)",
    )  # fmt: skip
    g.add_argument(
        "--media-type", dest="parts", action=_MediaTypeAction, metavar="TYPE",
        help="the media type of the part just before (else guessed from a file's name)",
    )  # fmt: skip
    p.add_argument("--metadata", metavar="JSON", help="metadata of the request, a JSON object")
    p.set_defaults(parts=None)


def _save_files(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--save-files", metavar="DIR",
        help="write the files of the task's artifacts (or of the agent's message) into DIR",
    )  # fmt: skip


# -- commands --------------------------------------------------------------------------------


def _add(
    sub: Any, name: str, func: cmd.Command | None, help: str, description: str | None = None
) -> argparse.ArgumentParser:
    text = description or help[0].upper() + help[1:] + "."
    width = min(88, _columns() - 2)
    text = "\n\n".join(textwrap.fill(par, width) for par in text.split("\n\n"))
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=text,
        formatter_class=_Formatter, add_help=False,
    )  # fmt: skip
    p.add_argument("-h", "--help", action="help", help="show this help and exit")
    if func is not None:
        p.set_defaults(func=func)
    return p


def _leaf(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    _global_options(p, top=False)
    p.set_defaults(parser=p)  # whose usage a stray argument is reported with
    return p


def _push_config_commands(sub: Any) -> None:
    p = _add(
        sub, "push-config", None, "manage a task's push-notification configs",
        "Create, read, list and delete the push-notification configs of a task: where the "
        "agent posts the task's updates.",
    )  # fmt: skip
    psub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    c = _add(psub, "create", cmd.push_create, "ask the agent to post the task's updates to a URL")
    c.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    c.add_argument("url", type=_url, metavar="URL", help="the webhook that receives the updates")
    c.add_argument("--token", help="a token the agent sends back with every notification")
    c.add_argument("--config-id", metavar="ID", help="the config's id (default: the agent's)")
    _leaf(c)
    g = _add(psub, "get", cmd.push_get, "show one push config of a task")
    g.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    g.add_argument("config_id", metavar="CONFIG_ID", nargs="?", help="default: the task's only one")
    _leaf(g)
    ls = _add(psub, "list", cmd.push_list, "list the push configs of a task")
    ls.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    _leaf(ls)
    d = _add(psub, "delete", cmd.push_delete, "delete a push config of a task")
    d.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    d.add_argument("config_id", metavar="CONFIG_ID", help="the config's id")
    _leaf(d)


def _no_cancel(p: argparse.ArgumentParser, when: str) -> None:
    p.add_argument(
        "--no-cancel", action="store_true",
        help=f"{when}, leave the tasks running on the agents and print their ids, instead "
        "of cancelling them",
    )  # fmt: skip


def _agents_commands(p: argparse.ArgumentParser) -> None:
    asub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    i = _add(
        asub, "import", importing.import_agents, "read the A2A agents of an AI Catalog",
        "Read the A2A agents an AI Catalog lists (the catalog at URL, or at "
        "/.well-known/ai-catalog.json of an origin) and print them as registry entries, or "
        "add them to the registry file with --write. Entries that cannot be used are refused, "
        "each with its reason; entries of other types, and agents the registry has already, "
        "are skipped.",
    )  # fmt: skip
    i.add_argument(
        "url", type=_url, metavar="URL", help="the catalog, or an origin that serves one"
    )
    i.add_argument(
        "--write", action="store_true",
        help="add the agents to the registry file (--config, $A2A_ANYIO_CONFIG, the one "
        "found, else ~/.config/a2a-anyio/agents.yaml); its comments are not kept",
    )  # fmt: skip
    _leaf(i)


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=_Formatter,
        add_help=False,
    )  # fmt: skip
    parser.add_argument("-h", "--help", action="help", help="show this help and exit")
    parser.add_argument(
        "-v", "--version", action="version", version=f"{PROG} {__version__}",
        help="print the version and exit",
    )  # fmt: skip
    _global_options(parser, top=True)
    sub = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )

    p = _add(
        sub, "card", cmd.card, "show an agent's card",
        "Fetch and show the agent's card: identity, capabilities, interfaces, security and "
        "skills. A card file given with -a is shown without any request.",
    )  # fmt: skip
    p.add_argument("get", nargs="?", choices=("get",), help="'card get' is the same as 'card'")
    p.add_argument(
        "--extended", action="store_true",
        help="fetch the authenticated extended card (send your credentials)",
    )  # fmt: skip
    p.add_argument(
        "--validate", action="store_true",
        help="list what the card gets wrong for the A2A version it claims, and what it likely "
        "does not mean (warnings); exit 1 if it gets anything wrong",
    )  # fmt: skip
    _leaf(p)

    p = _add(
        sub, "send", cmd.send, "send a message: start a task or continue one",
        "Send a message to the agent and wait until its task completes, fails or waits for "
        "input; print the task (or the agent's message).\n\nContinue a task with --task-id "
        "(e.g. one waiting for input), or start a new one in a context with --context-id.",
    )  # fmt: skip
    _message_options(p)
    p.add_argument("--context-id", metavar="ID", help="start the task in this existing context")
    p.add_argument("--task-id", metavar="ID", help="continue this existing task")
    p.add_argument(
        "--stream", action="store_true",
        help="follow the task's events as they come (JSON Lines with -o json)",
    )  # fmt: skip
    p.add_argument(
        "--async", "--no-wait", "--return-immediately", dest="no_wait", action="store_true",
        help="return as soon as the agent accepted the message (poll with 'task get --wait')",
    )  # fmt: skip
    _save_files(p)
    _no_cancel(p, "on Ctrl-C")
    _leaf(p)

    p = _add(
        sub, "chat", chat, "talk with an agent, a message a line, in one conversation",
        "Talk with the agent: each line you type is a message, in one context, and the "
        "agent's answer follows it (live when the agent streams). When the agent asks for "
        "input, the next line answers it, on the same task. /new starts a new context, "
        "/cancel cancels the open task, /help lists the commands, /exit or Ctrl-D leaves; "
        "Ctrl-C stops an answer, and at the prompt leaves (exit 130).\n\nPiped, each line "
        "of standard input is a message and each answer is printed, a blank line after it; "
        "with -o json, one JSON object a message. An error of one message is reported and "
        "the chat goes on.",
    )  # fmt: skip
    p.add_argument(
        "agent_name", nargs="?", metavar="AGENT",
        help="the agent: URL, card URL, card file or registry name (else -a)",
    )  # fmt: skip
    p.add_argument("--context-id", metavar="ID", help="talk in this existing context")
    p.add_argument(
        "--metadata", metavar="JSON", help="metadata of every message's request, a JSON object"
    )
    _leaf(p)

    p = _add(
        sub, "task", None, "get, cancel, list or follow tasks; manage push configs",
        "Work with the agent's tasks.",
    )  # fmt: skip
    tsub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    g = _add(
        tsub, "get", cmd.task_get, "show a task: state, artifacts, history",
        "Show a task: its state, status message and artifacts. --wait follows the task until "
        "it completes, fails or waits for input.",
    )  # fmt: skip
    g.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    g.add_argument("--history", type=int, metavar="N", help="include the last N messages")
    g.add_argument(
        "--wait", "--watch", action="store_true",
        help="follow the task until it is terminal or interrupted: re-attached when the agent "
        "streams, else polled (--timeout bounds it)",
    )  # fmt: skip
    g.add_argument(
        "--poll-interval", type=_seconds, default=1.0, metavar="SECONDS",
        help="the first wait between polls (default: 1; it grows up to 2 s)",
    )  # fmt: skip
    _save_files(g)
    _leaf(g)
    c = _add(tsub, "cancel", cmd.task_cancel, "ask the agent to cancel a task")
    c.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    _leaf(c)
    ls = _add(
        tsub, "list", cmd.task_list, "list tasks, most recently updated first",
        "List the agent's tasks, most recently updated first (A2A v1.0 agents, and v0.3 agents that serve tasks/list).",
    )  # fmt: skip
    ls.add_argument("--context-id", metavar="ID", help="only the tasks of this context")
    ls.add_argument(
        "--state", choices=[s.value for s in TaskState if s is not TaskState.UNKNOWN],
        help="only the tasks in this state",
    )  # fmt: skip
    ls.add_argument("--limit", type=_positive, default=50, metavar="N", help="default: 50")
    ls.add_argument("--cursor", metavar="CURSOR", help="the page after this cursor")
    _leaf(ls)
    s = _add(
        tsub, "subscribe", cmd.task_subscribe, "follow a running task's events",
        "Re-attach to a running task's events and follow it to its end; print the final "
        "task, or every event with --stream.",
    )  # fmt: skip
    s.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    s.add_argument(
        "--stream", action="store_true", help="print every event (JSON Lines with -o json)"
    )
    _leaf(s)
    d = _add(
        tsub, "download", cmd.task_download, "save the files of a task's artifacts",
        "Save the file parts of a task's artifacts into a directory, as --save-files does: "
        "inline bytes as they came, a URL's content fetched (credentials only to the agent's "
        "origin), each name made safe, nothing written outside the directory or over a file.",
    )  # fmt: skip
    d.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    d.add_argument(
        "-d", "--dir", default=".", metavar="DIR",
        help="the directory to save into, made if need be (default: the working directory)",
    )  # fmt: skip
    _leaf(d)
    _push_config_commands(tsub)

    _push_config_commands(sub)

    p = _add(
        sub, "call", cmd.call, "call any JSON-RPC method and print its result",
        "Call any JSON-RPC method of the agent (an extension's, say) and print the raw result "
        "as JSON. For a service at a custom path that has no card, give its URL with "
        "--endpoint.",
    )  # fmt: skip
    p.add_argument("method", metavar="METHOD", help="e.g. GetTask, tasks/get, cstp.queryDecisions")
    p.add_argument(
        "--params", metavar="JSON",
        help="the params: inline JSON, @FILE, or - for stdin (default: none)",
    )  # fmt: skip
    p.add_argument(
        "--idempotent", action="store_true",
        help="the method may safely run twice: retry it after a 502, 503 or 504 or a broken "
        "connection, as reads are (a 429 is retried for any method)",
    )  # fmt: skip
    _leaf(p)

    _auth_cmd.add_commands(sub, _add, _leaf)

    p = _add(
        sub, "agents", many.agents, "list the agents and groups of the registry; import more",
        "List the agents and groups of the registry file (credentials are shown by the "
        "variable or header that holds them, never by value). 'agents import URL' reads the "
        "agents of an AI Catalog.",
    )  # fmt: skip
    _leaf(p)
    _agents_commands(p)

    p = _add(
        sub, "fan-out", many.fan_out, "send one message to several agents at once",
        "Send one message to every agent named with -a (a registry group counts as its "
        "agents), all at once; follow them live on a terminal and print a summary. The exit "
        "status is 0 when every agent answered; otherwise that of the failures when they "
        "agree (3 when agents are unreachable), else 1.",
    )  # fmt: skip
    _message_options(p)
    p.add_argument(
        "--stream", action="store_true",
        help="print every event as it comes (JSON Lines with -o json)",
    )  # fmt: skip
    p.add_argument(
        "--limit", type=_positive, metavar="N", help="at most N agents at a time (default: all)"
    )
    _no_cancel(p, "on Ctrl-C and at --timeout")
    _leaf(p)

    p = _add(
        sub, "ping", many.ping, "check that agents answer and serve a card",
        "Check that each agent named with -a (default: every agent of the registry) answers, "
        "how fast, and that it serves a card.",
    )  # fmt: skip
    _leaf(p)

    p = _add(
        sub, "mcp", mcp.serve, "serve agents as the tools of an MCP server",
        "Serve agents to an MCP host (the mcp extra): the agents named with -a and the "
        "groups of --group, or every agent of the registry. One tool per agent, plus "
        "list_agents, get_task and cancel_task; a call reports the agent's events as MCP "
        "progress, and an MCP cancellation cancels the agent's task. Over stdio (the host "
        "starts this command), or with --http over MCP's streamable HTTP. The credentials are "
        "those of the registry and of the options here, never the MCP client's.",
    )  # fmt: skip
    p.add_argument(
        "--group", action="append", metavar="GROUP",
        help="serve the agents of this registry group (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--http", action="store_true",
        help="serve MCP's streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )  # fmt: skip
    p.add_argument(
        "--host", default="127.0.0.1",
        help="the address --http listens on (default: 127.0.0.1; another warns)",
    )  # fmt: skip
    p.add_argument(
        "--port", type=_port, default=8765, help="the port --http listens on (default: 8765)"
    )
    p.add_argument(
        "--list-tools", action="store_true",
        help="print the tools as MCP lists them (JSON) and exit",
    )  # fmt: skip
    _leaf(p)

    p = _add(
        sub, "demo", cmd.demo, "three local agents, one streaming fan-out, live",
        "Start three local agents of different A2A versions and speeds on 127.0.0.1, discover "
        "them, stream one request to all of them at once, cancel the laggard at a 3 s "
        "deadline and print a summary. Nothing needs configuring.",
    )  # fmt: skip
    _leaf(p)

    p = _add(
        sub, "conformance", conformance.conformance, "qualify an agent against its A2A version",
        "Fetch and validate the agent's card, then run every operation the card announces "
        "(send, stream, get, list, cancel, subscribe, push configs, extended card) over every "
        "interface it offers, and check each answer against the shape of the version that "
        "interface claims. Print a table of the checks: pass, fail, or skipped and why. Each "
        "check has a time limit, and all of them one; the tasks they start are cancelled. "
        "The exit status is 1 when a check fails.",
    )  # fmt: skip
    conformance.add_options(p, _seconds)
    _leaf(p)

    p = _add(
        sub, "completion", completion.completion, "print a shell completion script",
        "Print the completion script of bash, zsh or fish, made from this program's own "
        "options and commands. Load it in the running shell with "
        "'source <(a2a-anyio completion bash)' (zsh: the same with zsh), or save it where "
        "the shell reads completions: a file in ~/.local/share/bash-completion/completions/, "
        "a _a2a-anyio file on $fpath, ~/.config/fish/completions/a2a-anyio.fish.",
    )  # fmt: skip
    p.add_argument("shell", choices=completion.SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(grammar=parser)
    _leaf(p)

    p = _add(
        sub, "config", None, "show the settings of a run and where each came from",
        "Inspect the configuration (read-only).",
    )  # fmt: skip
    csub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    c = _add(
        csub, "show", config.config_show, "the settings, each with its source",
        "Show each setting this run would use, and where it came from: a flag, an "
        "environment variable, the registry file (its defaults, which every agent of the "
        "file takes unless it says otherwise), or the built-in default. Credential values are "
        "shown as ***; change a setting with its flag, its variable, or by editing the file.",
    )  # fmt: skip
    _leaf(c)
    return parser


def finish_args(args: argparse.Namespace) -> argparse.Namespace:
    for name in _APPEND:
        late = getattr(args, f"{name}_late", None)
        if late:
            setattr(args, name, (getattr(args, name) or []) + late)
    env = os.environ
    #: The settings taken from the environment, and the variable of each (``config show``).
    args.from_env = {}
    for name, variables in ENV_SETTINGS.items():
        if getattr(args, name):
            continue
        for variable in variables:
            if env.get(variable):
                args.from_env[name] = variable
                value = env[variable]
                setattr(args, name, [value] if name == "agent" else value)
                break
    if not args.agent:
        args.agent = []
    return args


#: The options whose default an environment variable gives, and the variables, first first.
ENV_SETTINGS = {
    "agent": ("A2A_ANYIO_AGENT", "A2ACLI_AGENT_CARD"),
    "bearer": ("A2A_ANYIO_BEARER", "A2ACLI_BEARER"),
    "api_key": ("A2A_ANYIO_API_KEY", "A2ACLI_API_KEY"),
}
