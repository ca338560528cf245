"""The README's table of environment variables names every NUMBACUDA_UFUNC_* variable the
package or the engine mentions (C++ getenv calls, Python os.environ reads, messages)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"NUMBACUDA_UFUNC_[A-Z0-9_]*[A-Z0-9]")


def _table() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Environment variables\n", 1)[1]
    return section.split("\n## ", 1)[0]


def test_environment_table_names_every_variable():
    used = set()
    for folder, patterns in ((ROOT / "src", ("*.cpp", "*.h", "*.cuh")), (ROOT / "numbacuda_ufunc", ("*.py",))):
        for pattern in patterns:
            for path in folder.rglob(pattern):
                used |= set(NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    documented = set(NAME.findall(_table()))
    assert used, "no variables found: the source layout changed"
    assert not used - documented, f"missing from the README's environment table: {sorted(used - documented)}"
