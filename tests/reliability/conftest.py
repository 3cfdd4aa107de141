"""The notebook fixtures (a real IPython shell with the extension loaded), for the reliability cases too; real
kernels (``kernels``, from :mod:`.test_real_kernel`) and a disk that can be filled (``full_disk``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from tests.notebook.conftest import Shell, shell  # noqa: F401
from tests.reliability.full_disk import FullDisk
from tests.reliability.test_real_kernel import Kernel, kernels  # noqa: F401


class DiskKernels(FullDisk):
    """A :class:`FullDisk` whose kernels run in its folder (the notebook ``work.ipynb`` there); the kernels are
    shut down before the disk is unmounted."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernels: list[Kernel] = []

    def kernel(self) -> Kernel:
        kernel = Kernel(self.folder)
        self.kernels.append(kernel)
        return kernel

    def close(self) -> None:
        for kernel in self.kernels:
            try:
                kernel.shutdown()
            except Exception as e:  # a kernel killed on purpose may already be gone
                warnings.warn(f"shutting down a test kernel: {e}", stacklevel=1)
        super().close()


@pytest.fixture
def full_disk(tmp_path, monkeypatch) -> Iterator[DiskKernels]:
    """A small disk at ``tmp_path/disk`` (see :mod:`.full_disk`), not full yet; HOME is ``tmp_path/home``, so a
    session that falls back to ``~/.pi_notebook`` stays in the test's folder. Unmounted at the end, always."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    disk = DiskKernels(tmp_path / "disk")
    try:
        yield disk
    finally:
        disk.close()
