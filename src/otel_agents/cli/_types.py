"""argparse ``type=`` functions for the options several commands share: a bad value is an argparse
error (exit status 2, the option named), not a traceback or a value taken silently: each raises
``argparse.ArgumentTypeError`` saying what is expected, which argparse reports against the option (for a plain
``ValueError`` it names the function instead: ``invalid at_least_one value: 'x'``)."""

from __future__ import annotations

import argparse
import math
from typing import Callable, TypeVar

_N = TypeVar("_N", int, float)


def _parsed(text: str, convert: Callable[[str], _N], expected: str) -> _N:
    """``convert(text)``, or an ``argparse.ArgumentTypeError`` saying ``expected`` and what was given."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{expected}, got {text!r}") from None


def at_least_one(text: str) -> int:
    """A whole number >= 1.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or below 1.
    """
    value = _parsed(text, int, "must be a whole number, at least 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0-65535 (0: any free port); the OS would take a larger one modulo 65536.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or out of range.
    """
    value = _parsed(text, int, "must be a port, 0-65535")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port, 0-65535, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0.

    Raises:
        argparse.ArgumentTypeError: not a number, 0 or less, infinite or NaN.
    """
    value = _parsed(text, float, "must be a number of seconds above 0")
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds >= 0.

    Raises:
        argparse.ArgumentTypeError: not a number, negative, infinite or NaN.
    """
    value = _parsed(text, float, "must be a number of seconds, 0 or more")
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, got {text}")
    return value


def http_url(text: str) -> str:
    """An absolute ``http``/``https`` URL with a host (``127.0.0.1:4318`` alone is not one), as given.

    Raises:
        argparse.ArgumentTypeError: not such a URL (what is wrong with it).
    """
    from ..exporters.presets import check_url  # the presets' own check (not imported at start-up)

    try:
        check_url(text, "the URL")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("the URL ")) from None
    return text


def url_path(text: str) -> str:
    """An HTTP path, which starts with ``/`` (``ecp`` would be announced as ``http://host:port ecp``) and holds no
    ``?`` or ``#``: a URL's path ends there (``http://host/a?b`` is the path ``/a`` with the query ``b``), so a
    request to the URL announced never reached it (404).

    Raises:
        argparse.ArgumentTypeError: it does not start with ``/``, or holds ``?`` or ``#``.
    """
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"must start with '/', got {text!r} (e.g. /{text})")
    bad = next((c for c in text if c in "?#"), None)
    if bad is not None:
        raise argparse.ArgumentTypeError(f"{text!r} holds {bad!r}, where a URL's path ends: requests to the URL "
                                         f"announced would go to {text.split(bad)[0]!r} and get 404")
    return text


def bearer_token(text: str) -> str:
    """A bearer token for ``--auth-token`` (or ``OTEL_AGENTS_ECP_TOKEN``, its default): visible ASCII
    (:func:`otel_agents.serve.http.check_token` says why).

    Raises:
        argparse.ArgumentTypeError: empty, or a character HTTP cannot carry (the message never shows the token).
    """
    from ..serve.http import check_token

    try:
        return check_token(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (from --auth-token or $OTEL_AGENTS_ECP_TOKEN)") from None


def origin(text: str) -> str:
    """An origin for ``--allow-origin``: ``scheme://host[:port]`` as a browser sends it (normalised: lower case, no
    default port), ``*`` or ``null`` (:func:`otel_agents.serve.http.normalise_origin`).

    Raises:
        argparse.ArgumentTypeError: not an origin (``https://ui.example/``: a path, which never matches).
    """
    from ..serve.http import normalise_origin

    try:
        return normalise_origin(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
