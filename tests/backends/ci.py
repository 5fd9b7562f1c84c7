"""A missing backend is a skip on a developer's machine and a failure in CI (``CI=true``): never a
silent pass where the backend should have been provisioned."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason} (a failure, not a skip, because CI=true)")
    pytest.skip(reason)
