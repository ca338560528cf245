"""Writes docs/changelog.md from `git log`: main's own history (first parents), by day.

    python scripts/changelog.py            # rewrite docs/changelog.md
"""

import pathlib
import subprocess
from itertools import groupby

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEAD = """# Changelog

numbacuda_ufunc {version} is not released yet. Until it is, this page is the project's
history as `git log --first-parent` records it, newest first: one line per commit or merged
branch of the main line, by day. `python scripts/changelog.py` writes it again.
"""


def main() -> None:
    log = subprocess.run(["git", "log", "--first-parent", "--date=short", "--format=%ad%x09%h%x09%s"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    entries = [line.split("\t", 2) for line in log.splitlines() if line.strip()]
    version = (ROOT / "numbacuda_ufunc" / "__init__.py").read_text().split('__version__ = "')[1].split('"')[0]
    out = [HEAD.format(version=version)]
    for day, items in groupby(entries, key=lambda e: e[0]):
        out.append(f"\n## {day}\n")
        for _, sha, subject in items:
            out.append(f"* `{sha}` {subject}")
    (ROOT / "docs" / "changelog.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
