"""Every Python example in the README runs as written (on the backend the suite uses)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run(tmp_path):
    # dask is one of our dependencies; a GPU machine without it (no network there) skips
    pytest.importorskip("dask.array")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 4  # vectorize, guvectorize, reduce, device arrays
    script = tmp_path / "readme_examples.py"  # a file: the translator reads the source
    script.write_text("\n\n".join(blocks))
    out = subprocess.run([sys.executable, str(script)], env=dict(os.environ), capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
