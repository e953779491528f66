"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (no broken link, no page
left out of the nav), and its generated pages are what ``python -m colocate.docs`` writes from the files they
describe, so they cannot drift."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml
from colocate import docs
from colocate.configtypes import config_schema
from wfutil import REPO, doc_files

SITE = yaml.safe_load((REPO / "mkdocs.yml").read_text())


def _nav_pages(nav) -> list[str]:
    out = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_mkdocs_build_strict_passes(tmp_path):
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                          "-d", str(tmp_path / "site")], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
    assert (tmp_path / "site/reference/configuration/index.html").is_file()
    assert (tmp_path / "site/sources/azure/index.html").is_file()


def test_every_page_is_in_the_nav_and_read_by_the_command_tests():
    pages = sorted(p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md"))
    assert sorted(_nav_pages(SITE["nav"])) == pages
    assert [REPO / "README.md", *(REPO / "docs" / p for p in pages)] == doc_files()


def test_generated_pages_are_up_to_date():
    for path, render in docs.pages(REPO).items():
        assert path.read_text() == render(), f"{path.relative_to(REPO)} is stale: run python -m colocate.docs"


def test_the_generator_command_checks_and_writes(tmp_path):
    """``python -m colocate.docs --check`` passes on the repository; on a copy with a stale page it fails, and the
    command without ``--check`` rewrites the page as committed."""
    res = subprocess.run([sys.executable, "-m", "colocate.docs", "--check"], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    (tmp_path / "workflow").symlink_to(REPO / "workflow", target_is_directory=True)
    page = tmp_path / "docs/reference/configuration.md"
    page.parent.mkdir(parents=True)
    page.write_text("stale\n")
    res = subprocess.run([sys.executable, "-m", "colocate.docs", "--check", "--repo", str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 1 and "is stale" in res.stdout
    subprocess.run([sys.executable, "-m", "colocate.docs", "--repo", str(tmp_path)], check=True, capture_output=True)
    assert page.read_text() == (REPO / "docs/reference/configuration.md").read_text()


def test_the_reference_lists_every_key_with_its_default():
    text = (REPO / "docs/reference/configuration.md").read_text()
    schema = config_schema(REPO / "workflow/schemas")
    sections = [name for name, s in schema["properties"].items() if s.get("properties")]
    keys = [k for k, _ in docs._keys(schema, "") if k not in sections]  # a section is a heading, its keys rows
    assert len(keys) > 300
    listed = re.findall(r"^\| `([^`]+)` \|", text, re.M)
    assert listed == keys  # every key, once, in the schemas' order
    assert re.findall(r"^## `(\w+)`$", text, re.M) == sections
    assert "| `trace.source` | string | `\"synthetic\"` |" in text
    assert "| `realizations.n_tasks` | integer, ≥ 1 | from `scale`: tiny `200`; default `5000`; paper `100000` |" in text


def test_type_text_reads_the_schema_forms():
    assert docs.type_text({"type": "integer", "minimum": 1}) == "integer, ≥ 1"
    assert docs.type_text({"type": ["string", "null"]}) == "string or null"
    assert docs.type_text({"oneOf": [{"type": "string", "enum": ["all"]}, {"type": "integer"}]}) == 'one of `"all"` or integer'
    assert docs.type_text({"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}, "minItems": 1}) == (
        "array of (number, > 0), at least 1 item(s)")
