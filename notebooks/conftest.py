"""nbval (tests/test_notebooks.py runs it on this folder): the saved forms' JSON is not compared.

A finished cell's saved form (pi_notebook/notebook/saved.py) holds the messages' Pi JSON with the timestamps and
ids of the run, inside JSON that nbval's sanitizers (strings only) cannot reach. The same messages are compared
in the output's text/html and text/plain, which leave timestamps and ids out; nbval already skips the widget view.
"""

import nbval.plugin

_SAVED_FORMS = ("application/vnd.pi-notebook.transcript+json", "application/vnd.pi-notebook.inspector+json")
_init = nbval.plugin.IPyNbFile.__init__


def _init_skipping_saved_forms(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.skip_compare = (*self.skip_compare, *_SAVED_FORMS)


nbval.plugin.IPyNbFile.__init__ = _init_skipping_saved_forms
