"""The notebook fixtures (a real IPython shell with the extension loaded), for the reliability cases too."""

from tests.notebook.conftest import Shell, shell  # noqa: F401
