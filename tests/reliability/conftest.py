"""The notebook fixtures (a real IPython shell with the extension loaded), for the reliability cases too, and
real kernels (``kernels``, from :mod:`.test_real_kernel`)."""

from tests.notebook.conftest import Shell, shell  # noqa: F401
from tests.reliability.test_real_kernel import kernels  # noqa: F401
