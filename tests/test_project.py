"""Project files that users and CI depend on stay consistent."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _pins(specs: list[str]) -> dict[str, str]:
    out = {}
    for spec in specs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)", spec.strip())
        assert m, f"not a lower-bound pin: {spec!r}"
        out[m.group(1).lower()] = m.group(3)
    return out


#: conda-forge's name → PyPI's, where they differ
PYPI_NAME = {"python-isal": "isal"}


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = _pins(project["dependencies"] + project["optional-dependencies"]["test"])
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    conda = _pins([d.replace("python>=", "python>=") for d in env["dependencies"] if isinstance(d, str) and d not in ("pip",)])
    conda.pop("python")
    # the packages conda-forge names otherwise than PyPI
    conda = {PYPI_NAME.get(name, name): pin for name, pin in conda.items()}
    assert conda == wanted


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_cmd = next(b for b in blocks if "pytest" in b)
    assert test_cmd.strip() in (REPO / ".ci" / "run").read_text()


def test_the_documented_test_tiers_select_declared_markers():
    """The README's and the docs' ``python -m pytest -m EXPR`` commands name only markers pyproject.toml declares (an
    unknown name in ``-m`` selects nothing, silently), and both the README and Getting started show the unit tier."""
    import shlex

    from wfutil import doc_files, snippets_at

    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    declared = {m.split(":")[0] for m in options["markers"]}
    shown = set()
    for page in doc_files():
        for _, code in snippets_at(page.read_text()):
            try:
                words = shlex.split(code)
            except ValueError:
                continue
            if words[:3] == ["python", "-m", "pytest"] and "-m" in words[3:]:
                expr = words[words.index("-m", 3) + 1]
                assert set(re.findall(r"\w+", expr)) - {"not", "and", "or"} <= declared, (page.name, code)
                shown.add((page.name, expr))
    assert {("README.md", "not slow"), ("getting-started.md", "not slow")} <= shown, shown


def test_every_rule_declares_log_benchmark_threads_resources_conda():
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        for block in re.split(r"\n(?=rule \w+:)", text)[1:]:
            name = re.match(r"rule (\w+):", block).group(1)
            for directive in ("log:", "benchmark:", "threads:", "resources:", "mem_mb=", "runtime=", "conda:"):
                assert directive in block, f"{smk.name}: rule {name} lacks {directive}"


def test_section_schemas_declare_their_draft():
    """Snakemake's validator resolves a file $ref only when the file names its JSON-Schema draft."""
    sections = sorted((REPO / "workflow/schemas").glob("*.schema.yaml"))
    assert len(sections) > 5
    for path in sections:
        assert "$schema" in yaml.safe_load(path.read_text()), path.name


def test_each_stage_schema_is_a_config_section():
    """A <stage>.schema.yaml is the config section <stage>, with a description, with no line elsewhere."""
    from colocate.configtypes import config_schema

    schema = config_schema(REPO / "workflow/schemas")
    for path in (REPO / "workflow/schemas").glob("*.schema.yaml"):
        section = path.name.removesuffix(".schema.yaml")
        if section != "config":
            assert schema["properties"][section]["description"], section
            assert schema["properties"][section]["type"] == "object", section


class _NoDuplicates(yaml.SafeLoader):
    """A YAML loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dupes = {k for k in keys if keys.count(k) > 1}
    assert not dupes, f"duplicate key(s) {dupes} at line {node.start_mark.line + 1}"
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def test_yaml_files_have_no_duplicate_keys():
    with pytest.raises(AssertionError, match="duplicate"):  # the loader does catch one
        yaml.load("a:\n  b: 1\n  b: 2\n", Loader=_NoDuplicates)
    paths = [REPO / "config.yaml", REPO / "environment.yml", *(REPO / "workflow").rglob("*.yaml"), *(REPO / "profiles").rglob("*.yaml")]
    assert REPO / "profiles" / "default" / "config.yaml" in paths
    for path in paths:
        yaml.load(path.read_text(), Loader=_NoDuplicates)


HELLO_RULES = '''
TARGETS.append((("machine_events",), [f"{RESULTS}/tables/hello.csv"]))


rule hello:
    output:
        f"{RESULTS}/tables/hello.csv",
    params:
        greeting=config["hello"]["greeting"],
    log:
        f"{RESULTS}/logs/hello.log",
    benchmark:
        f"{RESULTS}/benchmarks/hello.tsv"
    threads: 1
    resources:
        mem_mb=100,
        runtime=1,
    conda:
        "../../environment.yml"
    shell:
        "echo {params.greeting} > {output} 2> {log}"
'''
HELLO_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "description": "A stage added by a test.",
    "type": "object",
    "default": {},
    "additionalProperties": False,
    "properties": {"greeting": {"type": "string", "default": "hello from a new stage"}},
}


@pytest.mark.slow  # two Snakemake dry runs of a copy of the project
def test_a_new_stage_needs_no_include_line_and_no_schema_reference(tmp_path):
    """rules/<stage>.smk is included and schemas/<stage>.schema.yaml is its config section, found by name."""
    import subprocess
    import sys

    work = tmp_path / "repo"
    (work / "workflow").mkdir(parents=True)
    for child in (REPO / "workflow").iterdir():
        if child.name in ("rules", "schemas"):
            shutil.copytree(child, work / "workflow" / child.name)
        elif child.name != "__pycache__":
            (work / "workflow" / child.name).symlink_to(child, target_is_directory=child.is_dir())
    for name in ("Snakefile", "config.yaml", "environment.yml"):
        shutil.copy(REPO / name, work / name)
    (work / "notebooks").symlink_to(REPO / "notebooks", target_is_directory=True)
    (work / "workflow/rules/hello.smk").write_text(HELLO_RULES)
    (work / "workflow/schemas/hello.schema.yaml").write_text(yaml.safe_dump(HELLO_SCHEMA, allow_unicode=True))
    run = [sys.executable, "-m", "snakemake", "-s", str(work / "Snakefile"), "-d", str(work), "--cores", "1",
           "--config", "scale=tiny"]
    res = subprocess.run([*run, "-n", "--quiet", "rules"], capture_output=True, text=True, cwd=work, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert re.search(r"^hello\s+1\s*$", res.stdout, re.M), res.stdout[-2000:]
    bad = subprocess.run([*run, 'hello={"greeting": [1]}', "-n"], capture_output=True, text=True, cwd=work, check=False)
    assert bad.returncode != 0 and "config key hello.greeting" in bad.stdout + bad.stderr


def test_notebooks_are_numbered_once_each_and_have_cell_ids():
    """01…05 in the papers' order, and valid nbformat 4.5 with cell ids (no MissingIDFieldWarning at every DAG build)."""
    import warnings

    import nbformat

    paths = sorted((REPO / "notebooks").glob("*.ipynb"))
    numbers = [p.name[:2] for p in paths]
    assert numbers == [f"{i:02d}" for i in range(1, len(paths) + 1)], numbers
    for path in paths:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nb = nbformat.read(path, as_version=4)
            nbformat.validate(nb)
        assert all(cell.get("id") for cell in nb.cells), path.name
        assert nb.cells[0].source.startswith(f"# {path.name[:2]} "), path.name  # the title carries its number


#: Measurement history in library text: a date (YYYY-MM-DD) or a commit named by its hash. The current fact belongs
#: in the text; when and at which commit it was measured belongs in docs/performance.md or the git log.
HISTORY = re.compile(r"\b(?:19|20)\d{2}-[01]\d-[0-3]\d\b|\bcommit\s+[0-9a-f]{7,40}\b", re.I)


def test_library_and_rule_text_hold_no_dates_or_commit_hashes():
    assert HISTORY.search("measured 2026-11-24 at commit abc1234") and HISTORY.search("see Commit 0123abcd")
    assert not HISTORY.search("JSON schema draft 2020-12") and not HISTORY.search("sha256 0123abcdef")
    files = sorted((REPO / "workflow/colocate").rglob("*.py")) + sorted((REPO / "workflow/rules").glob("*.smk"))
    assert len(files) > 20
    hits = [f"{path.relative_to(REPO)}:{n}: {m.group(0)!r}"
            for path in files for n, line in enumerate(path.read_text().splitlines(), 1)
            for m in HISTORY.finditer(line)]
    assert not hits, "dates or commit hashes in library or rule text (keep the fact, drop the history):\n" + "\n".join(hits)
