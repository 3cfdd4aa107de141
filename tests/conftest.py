"""Fixtures shared by every layer's tests."""

import pytest

from pi_notebook.ai import faux


@pytest.fixture
def fresh_faux():
    """An empty faux script and call log before and after the test (the faux provider is process-wide)."""
    faux.reset()
    yield faux
    faux.reset()
