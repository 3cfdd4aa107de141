"""Layer 4: the Jupyter front end (magics, kernel session, widgets, inspector). Imports
:mod:`pi_notebook.coding_agent`, :mod:`pi_notebook.agent_core` and :mod:`pi_notebook.ai`; nothing imports it
back."""
