"""The README's example runs as written (on the backend the suite uses).

The README is the front door; the documentation's examples run in tests/test_docs.py.
"""

import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 1  # vectorize, guvectorize and a kernel
    script = tmp_path / "readme_examples.py"  # a file: the translator reads the source
    script.write_text("\n\n".join(blocks))
    out = subprocess.run([sys.executable, str(script)], env=dict(os.environ), capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
