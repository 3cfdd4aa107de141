"""pi_notebook: Pi's two-layer agent message design (AgentMessage / Message) as a Jupyter extension.

``%load_ext pi_notebook`` registers ``%%agent``, ``%bash``, ``%bash!``, ``%agent_session`` and
``%agent_config``. The layers are importable on their own: :mod:`pi_notebook.ai` (LLM messages and
providers) and :mod:`pi_notebook.agent` (AgentMessage, the loop, session files).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "current_session", "load_ipython_extension", "record", "unload_ipython_extension"]


def load_ipython_extension(shell: Any) -> None:
    """Called by ``%load_ext pi_notebook``."""
    from .notebook.extension import load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """Called by ``%unload_ext pi_notebook``."""
    from .notebook.extension import unload

    unload(shell)


def current_session() -> Any:
    """The kernel's agent session: ``.messages``, ``.llm_messages()``, ``.file``, ``.agent``."""
    from .notebook.extension import current_session as get

    return get()


def record(message: Any) -> None:
    """Add any registered AgentMessage to the kernel's session."""
    current_session().record(message)
