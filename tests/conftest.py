"""Fixtures shared by every layer's tests."""

import os

import pytest

from pi_notebook.ai import faux

# Kernels started by tests (and nbval's) load no model in the background: the suite's memory and time stay what
# they were. The preload's own tests unset it (tests/notebook/test_warm_up.py, reliability/test_preload_kernel.py).
os.environ.setdefault("PI_NOTEBOOK_NO_PRELOAD", "1")


@pytest.fixture
def fresh_faux():
    """An empty faux script and call log before and after the test (the faux provider is process-wide)."""
    faux.reset()
    yield faux
    faux.reset()
