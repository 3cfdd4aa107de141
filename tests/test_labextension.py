"""The labextension conventions: JupyterLab's own tooling finds the prebuilt extension through the package."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_builder.federated_extensions import _get_labextension_metadata  # JupyterLab 4.5+ tooling


def test_jupyterlab_finds_the_prebuilt_extension_through_the_package(tmp_path):
    # what `jupyter labextension develop pi_notebook` and `jupyter labextension list` ask the package
    module, paths = _get_labextension_metadata("pi_notebook")
    [entry] = paths
    built = Path(module.__file__).parent / entry["src"]
    package = json.loads((built / "package.json").read_text())
    assert package["name"] == entry["dest"] == "pi-notebook"
    assert (built / package["jupyterlab"]["_build"]["load"]).is_file()  # the built remote entry is there
