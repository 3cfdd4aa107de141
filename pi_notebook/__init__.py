"""pi_notebook: Pi's two-layer agent message design (AgentMessage / Message) as a Jupyter extension."""

__version__ = "0.1.0"
