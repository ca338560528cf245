# docs/conf.py: Sphinx configuration of the numbacuda_ufunc documentation.
# Build: pip install -e ".[docs]" && sphinx-build -W -b html docs docs/_build/html
import numbacuda_ufunc

project = "numbacuda_ufunc"
author = "the numbacuda_ufunc developers"
copyright = "2026, the numbacuda_ufunc developers"
release = numbacuda_ufunc.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]

# The pages are Markdown (the README's material moved here); `#anchor` links resolve to
# headings down to level 3, as on GitHub.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
# numpydoc's own member tables would list every method again beside autosummary's.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = f"numbacuda_ufunc {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
