"""Path arguments as Pi's tools read them (``path-utils.ts``).

Models paste paths the way a user types them in Pi's editor: ``@src/main.py`` (a file mention), ``~/notes``,
or with a non-breaking space copied from a web page or a macOS screenshot name. Every tool resolves its path
argument through :func:`resolve_to_cwd`; ``read`` also tries the spellings macOS uses on disk.
"""

from __future__ import annotations

import os
import re
import unicodedata

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.")
_NARROW_NO_BREAK_SPACE = "\u202f"


def expand_path(path: str) -> str:
    """Strip a leading ``@``, turn unicode spaces into plain spaces and expand ``~`` / ``~/...``."""
    if path.startswith("@"):
        path = path[1:]
    path = _UNICODE_SPACES.sub(" ", path)
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.expanduser("~") + path[1:]
    return path


def resolve_to_cwd(path: str, cwd: str | os.PathLike[str]) -> str:
    """The absolute path ``path`` names, relative paths taken from ``cwd``."""
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return expanded
    return os.path.normpath(os.path.join(os.fspath(cwd), expanded))


def resolve_read_path(path: str, cwd: str | os.PathLike[str]) -> str:
    """Like :func:`resolve_to_cwd`, but if that file does not exist try the names macOS gives files.

    macOS screenshots are named ``... 10.15.32 AM.png`` with a narrow no-break space before ``AM``, French
    ones ``Capture d’écran`` with a curly apostrophe, and the file system stores names decomposed (NFD);
    a model typing the name gets none of these right.
    """
    resolved = resolve_to_cwd(path, cwd)
    if os.path.exists(resolved):
        return resolved
    am_pm = _AM_PM.sub(lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved)
    nfd = unicodedata.normalize("NFD", resolved)
    curly = resolved.replace("'", "\u2019")
    for candidate in (am_pm, nfd, curly, unicodedata.normalize("NFD", curly)):
        if candidate != resolved and os.path.exists(candidate):
            return candidate
    return resolved
