"""Layer 3: the Jupyter app (magics, widgets, inspector). Imports :mod:`pi_notebook.agent` and
:mod:`pi_notebook.ai`; nothing imports it back."""
