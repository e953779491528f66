"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (no broken link, no page
left out of the nav), and its generated pages are what ``python -m colocate.docs`` writes from the files they
describe, so they cannot drift."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
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
    assert (tmp_path / "site/reference/outputs/index.html").is_file()


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


def test_the_outputs_page_lists_every_report_output_of_the_rules():
    """Every ``report(`` of workflow/rules/*.smk is read (one per call; a comprehension's once per item), and each
    output is a row of its category's table, with its rule."""
    outputs = docs.report_outputs(REPO / "workflow/rules")
    calls = {(path, text.count("\n", 0, m.start()) + 1) for path in sorted((REPO / "workflow/rules").glob("*.smk"))
             for text in [path.read_text()] for m in re.finditer(r"(?<![\w.])report\(", text)}
    assert len(calls) > 80 and {(o.rule_file, o.line) for o in outputs} == calls
    assert len(outputs) > len(calls)  # the figure and table comprehensions, once per figure or table
    text = (REPO / "docs/reference/outputs.md").read_text()
    assert f"{len(outputs)} in all" in text
    categories = list(dict.fromkeys(o.category for o in outputs))
    assert re.findall(r"^## (.+)$", text, re.M) == categories
    rows = re.findall(r"^\| (`[^|]+?) \| `(\w+)` \(`\w+\.smk`\) \| ", text, re.M)
    listed = [(path, rule) for cell, rule in rows for path in re.findall(r"`([^`]+)`", cell)]
    assert sorted(listed) == sorted((o.path, o.rule) for o in outputs)
    assert ("figures/packing_fig13_rebalancing.png", "packing_figures") in listed
    assert ("tables/placement_table8.csv", "placement_tables") in listed
    assert ("notebooks/{name}.html", "notebook_html") in listed  # a wildcard stays visible
    assert "{RESULTS}" not in text and "``" not in text


def _rules(tmp_path, smk: str, captions: dict[str, str]):
    (tmp_path / "workflow/rules").mkdir(parents=True)
    (tmp_path / "workflow/report").mkdir(parents=True)
    (tmp_path / "workflow/rules/a.smk").write_text(textwrap.dedent(smk))
    for name, text in captions.items():
        (tmp_path / "workflow/report" / name).write_text(text)


SMALL = """\
    CAT = "Figures of A"
    FIGS = {
        "one": "a_one",
        "two": "a_two",
    }

    rule a_table:
        input:
            f"{RESULTS}/x.parquet",
        output:
            plain=f"{RESULTS}/a/plain.parquet",
            table=report(
                f"{RESULTS}/tables/a_{{name}}.csv",
                caption="../report/a_table.rst",
                category="Tables of A",
            ),
        script:
            "../scripts/a.py"

    if True:
        rule a_figures:
            output:
                **{
                    k: report(f"{RESULTS}/figures/{name}.png", caption=f"../report/{name}.rst", category=CAT,
                              subcategory="Figures")
                    for k, name in FIGS.items()
                },
"""


def test_the_outputs_page_of_two_small_rules(tmp_path):
    """A known answer: two rules, three report outputs (two from a comprehension, in a rule nested under ``if``),
    a wildcard kept, reST code spans as Markdown's, one category per section in the order written."""
    _rules(tmp_path, SMALL, {"a_table.rst": "The ``name`` table,\nper <run>.\n", "a_one.rst": "One.\n",
                             "a_two.rst": "Two | three.\n"})
    outputs = docs.report_outputs(tmp_path / "workflow/rules")
    assert [(o.path, o.rule, o.line, o.category, o.subcategory, o.caption.name) for o in outputs] == [
        ("tables/a_{name}.csv", "a_table", 12, "Tables of A", None, "a_table.rst"),
        ("figures/a_one.png", "a_figures", 24, "Figures of A", "Figures", "a_one.rst"),
        ("figures/a_two.png", "a_figures", 24, "Figures of A", "Figures", "a_two.rst"),
    ]
    page = docs.outputs_reference(tmp_path)
    assert "3 in all" in page
    assert page.split("\n## ", 1)[1] == textwrap.dedent("""\
        Tables of A

        | output | rule | caption |
        |---|---|---|
        | `tables/a_{name}.csv` | `a_table` (`a.smk`) | The `name` table, per &lt;run&gt;. |

        ## Figures of A

        | output | rule | caption |
        |---|---|---|
        | `figures/a_one.png` (Figures) | `a_figures` (`a.smk`) | One. |
        | `figures/a_two.png` (Figures) | `a_figures` (`a.smk`) | Two \\| three. |
        """)


def test_a_missing_caption_is_an_error_naming_the_rule_file_and_line(tmp_path):
    _rules(tmp_path, SMALL, {"a_table.rst": "T.\n", "a_one.rst": "One.\n"})
    with pytest.raises(ValueError, match=r"a\.smk:24: rule a_figures: caption \.\./report/a_two\.rst does not exist"):
        docs.report_outputs(tmp_path / "workflow/rules")
    # a caption the generator cannot read without running the workflow is an error too, not a silent omission
    (tmp_path / "workflow/rules/a.smk").write_text(SMALL.replace('caption="../report/a_table.rst"', "caption=CAPTION"))
    with pytest.raises(ValueError, match=r"a\.smk:12: rule a_table: .*readable without running it"):
        docs.report_outputs(tmp_path / "workflow/rules")


def test_every_caption_the_rules_name_exists():
    outputs = docs.report_outputs(REPO / "workflow/rules")  # raises, naming the file and line, on a missing one
    assert all(o.caption.is_file() and o.caption.parent == REPO / "workflow/report" for o in outputs)
