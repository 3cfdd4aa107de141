"""Old home of the faux provider, kept so ``from pi_notebook.ai.providers import faux`` still works.

The provider lives in :mod:`pi_notebook.ai.faux`; this name is that same module.
"""

import sys

from .. import faux

sys.modules[__name__] = faux
