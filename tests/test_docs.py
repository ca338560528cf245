"""The documentation (docs/): its examples run, its reference and its tables are complete.

Every ```python block of a page runs, the page's blocks in order as one script, on the
backend the suite uses (emulation without a GPU). Blocks fenced ```py are shown only: they
need several GPUs or libraries the test extra does not bring (dask-cuda, CuPy).
"""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

import numbacuda_ufunc
from numbacuda_ufunc import cuda

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "generated" not in p.parts)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
EXAMPLE_PAGES = [p for p in PAGES if BLOCK.search(p.read_text())]


def test_docs_pages_found():
    # the guide's pages with examples; a renamed folder would otherwise test nothing
    names = {p.relative_to(DOCS).as_posix() for p in EXAMPLE_PAGES}
    assert {"getting-started/first-ufunc.md", "user-guide/vectorize.md", "user-guide/kernels.md",
            "user-guide/guvectorize.md", "user-guide/reductions.md", "interop.md",
            "migrating.md"} <= names


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_docs_examples_run(page, tmp_path):
    blocks = BLOCK.findall(page.read_text())
    source = "\n\n".join(blocks)
    # the test extra brings these; a GPU machine without network access may lack them
    for mod in sorted(set(re.findall(r"^\s*(?:import|from) (dask|pandas|xarray)\b", source, re.M))):
        pytest.importorskip(mod)
    script = tmp_path / (page.stem.replace("-", "_") + "_examples.py")  # the translator reads the file
    script.write_text(source)
    out = subprocess.run([sys.executable, str(script)], env=dict(os.environ), cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{page.name}:\n{out.stderr[-4000:]}"


def _autosummary_names(text):
    """(currentmodule, name) for every entry of the autosummary directives in text."""
    names, module = [], None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
        if re.match(r"\s*\.\. autosummary::", line):
            indent = len(line) - len(line.lstrip())
            for entry in lines[i + 1:]:
                if entry.strip() and len(entry) - len(entry.lstrip()) <= indent:
                    break
                entry = entry.strip()
                if entry and not entry.startswith(":"):
                    names.append((module, entry))
    return names


def test_api_reference_covers_every_public_name():
    listed = set()
    for page in (DOCS / "api").glob("*.md"):
        listed |= set(_autosummary_names(page.read_text()))
    for module in (numbacuda_ufunc, cuda):
        missing = [n for n in module.__all__ if (module.__name__, n) not in listed]
        assert not missing, f"docs/api/ does not list {module.__name__}.{missing}"
    stale = [f"{m}.{n}" for m, n in listed
             if m in ("numbacuda_ufunc", "numbacuda_ufunc.cuda") and "." not in n
             and not hasattr(sys.modules[m], n)]
    assert not stale, f"docs/api/ lists names that do not exist: {stale}"


def _environment_variables_read():
    """Every NUMBACUDA_UFUNC_* variable the package or the engine reads."""
    names = set()
    for path in [*(ROOT / "numbacuda_ufunc").rglob("*.py"), *(ROOT / "src").rglob("*.[ch]*")]:
        names |= set(re.findall(r"NUMBACUDA_UFUNC_[A-Z0-9_]+", path.read_text(errors="replace")))
    # the settings module reads NUMBACUDA_UFUNC_<NAME> (and NUMBA_<NAME>) for each setting
    for path in (ROOT / "numbacuda_ufunc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_from_environment":
                names.add("NUMBACUDA_UFUNC_" + node.args[0].value)
    return names


def test_environment_variable_table_is_complete():
    table = (DOCS / "user-guide" / "environment.md").read_text()
    documented = set(re.findall(r"^\| `(NUMBACUDA_UFUNC_[A-Z0-9_]+)", table, re.M))
    documented |= set(re.findall(r"`(NUMBACUDA_UFUNC_[A-Z0-9_]+)`", table))
    read = _environment_variables_read()
    assert not read - documented, f"not in docs/user-guide/environment.md: {sorted(read - documented)}"
    assert not documented - read, f"documented but never read: {sorted(documented - read)}"


def test_ci_runs_the_readme_commands():
    # The README's promise: its two commands set up a fresh machine, and .ci/run runs them.
    readme = (ROOT / "README.md").read_text()
    commands = re.search(r"## Set up a fresh machine.*?```bash\n(.*?)```", readme, re.S).group(1)
    ci = (ROOT / ".ci" / "run").read_text()
    for line in commands.splitlines():
        command = line.split("#")[0].strip()
        assert command and re.search(rf"^{re.escape(command)}\s*$", ci, re.M), command


def test_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def _public_objects():
    seen = set()
    for module in (numbacuda_ufunc, cuda):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and id(obj) not in seen and getattr(obj, "__doc__", None):
                seen.add(id(obj))
                yield f"{module.__name__}.{name}", obj


def test_docstring_examples_run():
    # The API reference shows the docstrings' >>> examples: they run as doctests.
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = 0
    for name, obj in _public_objects():
        for test in finder.find(obj, name, globs={}):
            examples += len(test.examples)
            runner.run(test)
    assert runner.failures == 0, f"{runner.failures} docstring examples failed (output above)"
    assert examples >= 16  # vectorize, guvectorize, reduce, cuda.jit, to_device, stream
