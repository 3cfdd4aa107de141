"""The approval prompt a cell shows before a tool call that needs a click (:mod:`.approval` waits on it).

A thin anywidget view (``widgets/src/approval.js``): the request as JSON (what the call would do: the command, the
code or the diff, drawn as text, coloured by line, never as HTML), and three buttons. The page speaks with
custom messages only: ``{"pi": "ping"}`` when it draws the prompt (a page is there to answer), and
``{"pi": "decide", "verdict": "approve" | "deny" | "always", "reason": ...}`` on a click. Once decided the cell's
output becomes plain text (:func:`decided_text`) and the widget is discarded, so a saved notebook holds the
decision as text, not a prompt with buttons.
"""

from __future__ import annotations

import threading
from typing import Any

import anywidget
import traitlets as t

from ..coding_agent.approval import ApprovalRequest, Decision
from .widgets import DISCARDED_ESM, asset_text, static_asset

TEXT_LIMIT = 200_000
"""The most characters of a command, code or diff drawn (the model may write megabytes); the rest is counted."""

# Used only when the built bundle is missing (a source checkout before the JS build): plain text and the buttons.
_FALLBACK_ESM = """
export default {
  render({ model, el }) {
    const r = model.get("request") || {};
    const pre = document.createElement("pre");
    pre.textContent = (r.title || "") + "\\n" + (r.note ? r.note + "\\n" : "") + (r.text || "");
    const row = document.createElement("div");
    for (const [label, verdict] of [["Approve", "approve"], ["Deny", "deny"], ["Always this session", "always"]]) {
      const b = document.createElement("button");
      b.textContent = label;
      b.onclick = () => { for (const x of row.children) x.disabled = true; model.send({ pi: "decide", verdict }); };
      row.appendChild(b);
    }
    el.replaceChildren(pre, row);
    model.send({ pi: "ping" });
  },
};
"""

_TITLES = {
    "command": "run this command",
    "code": "run this code in the kernel",
    "arguments": "make this call",
}


def request_view(request: ApprovalRequest) -> dict[str, Any]:
    """What the page draws of a request (its arguments stay in the kernel)."""
    if request.kind == "diff":
        action = f"{'write' if request.tool_name == 'write' else 'edit'} {request.path}"
    else:
        action = _TITLES[request.kind]
    text = request.text
    if len(text) > TEXT_LIMIT:
        text = f"{text[:TEXT_LIMIT]}\n... ({len(text) - TEXT_LIMIT:,} more characters not shown)"
    return {
        "tool": request.tool_name, "kind": request.kind, "text": text, "path": request.path, "note": request.note,
        "title": f"The agent wants to {action} ({request.tool_name}).", "summary": request.summary,
    }  # fmt: skip


def decided_text(request: ApprovalRequest, decision: Decision) -> str:
    """The line a cell keeps once the prompt is answered."""
    if decision.verdict == "approve":
        also = f", and every later {request.tool_name} call this session" if decision.always else ""
        return f"✓ approved{also}: {request.summary}"
    if decision.verdict == "deny":
        return f"✗ denied: {request.summary}" + (f" ({decision.reason})" if decision.reason else "")
    if decision.verdict == "stopped":
        return f"■ stopped while waiting for approval: {request.summary}"
    return f"✗ refused: {request.summary} needs approval, and nothing here can approve it ({decision.reason})"


class ApprovalWidget(anywidget.AnyWidget):
    """The prompt for one call. What the page says is taken on whichever thread hears it (:meth:`heard`):
    :attr:`pinged` and :attr:`decision` are safe to read from the waiting thread."""

    _esm = asset_text(static_asset("approval.js", _FALLBACK_ESM))
    _css = asset_text(static_asset("approval.css", ""))

    request = t.Dict().tag(sync=True)
    """What the call would do (:func:`request_view`)."""
    state = t.Unicode("asking").tag(sync=True)
    """``asking``, then ``approved``, ``denied``, ``stopped`` or ``unanswered``."""

    def __init__(self, request: ApprovalRequest, **kwargs: Any):
        super().__init__(request=request_view(request), **kwargs)
        self.pinged = threading.Event()
        self.decision: Decision | None = None
        self.changed = threading.Event()
        """Set whenever the page said something."""
        self._lock = threading.Lock()
        self._heard = 0  # messages taken before the kernel's main thread handled them (see approval._peek)
        self._handled = 0
        self._settled = False
        self.on_msg(self._on_page)

    def heard(self, content: Any, *, early: bool = False) -> None:
        """Take what the page said (``early``: heard on the kernel's shell channel thread, before the main thread
        handles the same message)."""
        if not isinstance(content, dict):
            return
        with self._lock:
            self._heard += early
            if content.get("pi") == "ping":
                self.pinged.set()
            elif content.get("pi") == "decide" and self.decision is None:
                self.pinged.set()
                verdict, reason = content.get("verdict"), content.get("reason")
                reason = reason.strip()[:2000] if isinstance(reason, str) else ""
                if verdict in ("approve", "always"):
                    self.decision = Decision.approve(always=verdict == "always")
                elif verdict == "deny":
                    self.decision = Decision.deny(reason)
            self.changed.set()

    def _on_page(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A custom message, handled on the kernel's main thread (while the cell waits through jupyter-ui-poll, or
        after it, when it was heard early)."""
        with self._lock:
            early = self._handled < self._heard
            self._handled += early
        if not early:
            self.heard(content)
        self._discard_when_quiet()

    def settle(self, state: str) -> None:
        """The question is over: the page's buttons stop; the widget goes once the page's last word is handled
        (closing it before would leave that message for a comm that is gone)."""
        self.state = state
        self._settled = True
        self._discard_when_quiet()

    def _discard_when_quiet(self) -> None:
        with self._lock:
            quiet = self._settled and self._handled >= self._heard
        if quiet and self.comm is not None:
            discard(self)


def discard(widget: anywidget.AnyWidget) -> None:
    """Close ``widget`` with its code and request emptied first (a headless runner saves a closed widget's last
    state with the notebook: nothing of the prompt should stay there)."""
    with widget.hold_sync():
        widget._esm = DISCARDED_ESM
        widget._css = ""
        widget.request = {}
    layout = getattr(widget, "layout", None)
    widget.close()
    if layout is not None:
        layout.close()
