"""Keep the shell's full-output temp files inside each test's own directory."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _private_tempdir(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tmp")))
