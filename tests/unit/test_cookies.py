"""The cookie jar on its own: parsing what servers send, paths, lifetimes and eviction."""

from __future__ import annotations

import pytest

from a2a_anyio._cookies import (
    MAX_BYTES,
    MAX_BYTES_PER_ORIGIN,
    MAX_COOKIES,
    MAX_COOKIES_PER_ORIGIN,
    CookieJar,
    Origin,
    default_path,
)
from a2a_anyio._http import make_client

A: Origin = ("https", "agent.example.com", 443)
B: Origin = ("https", "agent.example.com", 8443)


def sent(jar: CookieJar, origin: Origin = A, path: str = "/a2a", now: float = 0.0) -> str:
    return jar.header(origin, path, now, frozenset())


@pytest.mark.parametrize(
    ("path", "expected"),
    [("", "/"), ("/", "/"), ("/a2a", "/"), ("/v1/tasks", "/v1"), ("/a/b/", "/a/b"), ("x", "/")],
)
def test_default_path(path: str, expected: str) -> None:
    assert default_path(path) == expected


def test_paths_match_on_segments() -> None:
    jar = CookieJar()
    jar.store(A, "/", ["a=1; Path=/v1", "b=1; Path=/v1/", "c=1; Path=/", "d=1; Path=/v"], 0.0)
    assert sent(jar, path="/v1/tasks") == "b=1; a=1; c=1"  # longer paths first
    assert sent(jar, path="/v1") == "a=1; c=1"
    assert sent(jar, path="/v10") == "c=1"


@pytest.mark.parametrize(
    "line",
    [
        "novalue",
        "=value",
        " =value",
        "na me=1",
        "name\x00=1",
        "name=a\x00b",
        "name=a\rb",
        "name=caf\u00e9",
        "n\u00e4me=1",
        "name=" + "x" * 5000,
        "name=1; Path=/" + "p" * 9000,
    ],
)
def test_what_a_cookie_header_cannot_carry_is_not_kept(line: str) -> None:
    jar = CookieJar()
    jar.store(A, "/", [line], 0.0)
    assert len(jar) == 0 and sent(jar) == ""


def test_what_is_kept_is_sent_unchanged() -> None:
    jar = CookieJar()
    jar.store(A, "/", [' q="a b,c" ; Secure; HttpOnly', "e=; Path=/", "x=1=2"], 0.0)
    assert sent(jar) == 'q="a b,c"; e=; x=1=2'


@pytest.mark.parametrize(
    ("max_age", "now", "alive"),
    [
        ("60", 59.0, True),
        ("60", 61.0, False),
        ("0", 0.0, False),
        ("-1", 0.0, False),
        ("-" + "9" * 5000, 0.0, False),
        ("0" * 30 + "60", 59.0, True),
        ("0" * 30 + "60", 61.0, False),
        ("9" * 5000, 1e7, True),  # thousands of digits: the longest lifetime, 400 days
        ("9" * 5000, 4e7, False),
        ("12x", 1e9, True),  # not a number: ignored, a cookie for the jar's life
    ],
)
def test_max_age(max_age: str, now: float, alive: bool) -> None:
    jar = CookieJar()
    jar.store(A, "/", [f"s=1; Max-Age={max_age}"], 0.0)
    assert (sent(jar, now=now) == "s=1") is alive


def test_expires_dates_and_their_order_with_max_age() -> None:
    jar = CookieJar()
    jar.store(
        A,
        "/",
        [
            "old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "dashes=1; Expires=Wed, 21-Oct-2099 07:28:00 GMT",
            "far=1; Expires=Thu, 01 Jan 99999 00:00:00 GMT",  # no such date: a session cookie
            "junk=1; Expires=" + "1" * 100,
            "first=1; Max-Age=10; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
            "last=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Max-Age=10",
        ],
        0.0,
    )
    assert sent(jar, now=5.0) == "dashes=1; far=1; junk=1; first=1; last=1"
    assert sent(jar, now=11.0) == "dashes=1; far=1; junk=1"


def test_a_cookie_set_again_replaces_the_old_one_and_deletion_removes_it() -> None:
    jar = CookieJar()
    jar.store(A, "/", ["a=1", "b=1", "a=2"], 0.0)
    assert sent(jar) == "b=1; a=2"
    jar.store(A, "/", ["b=; Max-Age=0"], 0.0)
    assert sent(jar) == "a=2" and len(jar) == 1 and jar.size == len("a2/")


def test_origins_are_apart() -> None:
    jar = CookieJar()
    jar.store(A, "/", ["a=1"], 0.0)
    jar.store(B, "/", ["b=1"], 0.0)
    assert sent(jar, A) == "a=1" and sent(jar, B) == "b=1"
    assert sent(jar, ("http", "agent.example.com", 80)) == ""


def test_the_oldest_go_first_per_origin() -> None:
    jar = CookieJar()
    jar.store(B, "/", ["keep=1"], 0.0)
    for first in (0, MAX_COOKIES_PER_ORIGIN):
        jar.store(A, "/", [f"c{i}=1" for i in range(first, first + 10)], 0.0)
        jar.store(A, "/", [f"c{i}=1" for i in range(first + 10, first + 50)], 0.0)
    names = [p.split("=")[0] for p in sent(jar).split("; ")]
    assert names == [f"c{i}" for i in range(50, 50 + MAX_COOKIES_PER_ORIGIN)]
    assert sent(jar, B) == "keep=1"  # another origin's flood does not push this one out
    big = "v" * 4000
    for i in range(10):
        jar.store(A, "/", [f"big{i}={big}"], 0.0)
    assert len(sent(jar)) <= MAX_BYTES_PER_ORIGIN
    assert sent(jar).startswith(f"big6={big}")


def test_overall_bounds_push_out_the_oldest_origin_first() -> None:
    jar = CookieJar()
    value = "v" * 300
    for port in range(1, 60):
        jar.store(("https", "h", port), "/", [f"c{i}={value}" for i in range(40)], 0.0)
        assert len(jar) <= MAX_COOKIES and jar.size <= MAX_BYTES
    assert sent(jar, ("https", "h", 1)) == ""
    assert len(sent(jar, ("https", "h", 59)).split("; ")) == 40


def test_only_so_many_set_cookie_lines_of_one_answer_are_read() -> None:
    jar = CookieJar()
    jar.store(A, "/", ["x=1"] * 10_000 + ["late=1"], 0.0)
    assert sent(jar) == "x=1"


def test_the_httpx_clients_the_library_makes_keep_no_cookies() -> None:
    import httpx

    client = make_client()
    request = client.build_request("GET", "https://agent.example.com/")
    response = httpx.Response(200, headers={"set-cookie": "a=1"}, request=request)
    client.cookies.extract_cookies(response)
    assert len(client.cookies) == 0


def test_a_response_is_not_read_for_the_cookies_of_the_clients_the_library_makes() -> None:
    import httpx

    client = make_client()
    # No request behind it: httpx would need one to read the response for a jar.
    client.cookies.extract_cookies(httpx.Response(200, headers={"set-cookie": "a=1"}))
    client.cookies = {"b": "2"}  # nor are cookies given to it kept
    assert len(client.cookies) == 0
