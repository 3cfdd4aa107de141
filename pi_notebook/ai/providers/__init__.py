"""Provider translation: one module per LLM API, plus the pure request builders they share.

:mod:`.register_builtins` registers each built-in API in one place; a provider module is imported only when its
API is first used.

``transform.transform_messages`` is Pi's shared pre-pass; ``*_convert`` modules build the exact request
body of one API as a pure function (no I/O, no SDK import).
"""
