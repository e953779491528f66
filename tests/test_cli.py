"""The command line as documented, profiles that load, failures you can read.

* ``--config`` values are typed by the schema (colocate.configtypes): unit and property tests against
  Snakemake's own parser (``snakemake.cli.parse_config``), and every ``snakemake`` command and ``--config``
  example of README.md and the documentation's pages (docs/), parsed from them, run in a temporary directory.
* The default workflow profile (profiles/default) is picked up: after a ``kill -9`` the README's run
  command finishes the run (rerun-incomplete) with the results of a clean run; a second start while a
  run holds the lock gets Snakemake's lock message.
* A failing rule script leaves its traceback in its log and no ``*.tmp`` behind.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import polars as pl
import pytest
import yaml
from colocate import io as cio
from colocate.configtypes import NULL_WORDS, cli_text, coerce, coerce_config, config_schema, fill_defaults
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snakemake.cli import parse_config
from snakemake.settings.types import MaxJobsPerTimespan
from wfutil import (
    ACTIVATE,
    REPO,
    SAMPLE,
    activation_for,
    azure_dataset_layout,
    bare_path,
    doc_files,
    doc_text,
    docs_declare_activation,
    page_activation,
    shell,
    snakemake,
    snippets_at,
    venv_checkout,
    write_config,
)

SCHEMAS = REPO / "workflow" / "schemas"
README = REPO / "README.md"


SCHEMA = config_schema(SCHEMAS)  # as workflow/rules/common.smk builds it
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def from_cli(*entries: str) -> dict:
    """What the workflow sees of ``--config ENTRY ...``: Snakemake's parse, then the schema's types."""
    return coerce_config(parse_config(list(entries)), SCHEMA, cli_text(list(entries)))


def same(a, b) -> bool:
    """Equal with the same types all the way down (True != 1, 1 != 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


# ----------------------------------------------------------------------------- what Snakemake's parser does


def test_snakemake_leaves_nested_numbers_as_strings():
    """The cause: parse_config types a top-level value (int, float, True/False) but loads a nested one with
    YAML's BaseLoader, which types no scalar. If Snakemake ever types them, coercion is a no-op (see below)."""
    assert parse_config(['realizations={"n_tasks": 1000}']) == {"realizations": {"n_tasks": "1000"}}
    assert parse_config(['trace={"shards": [0, 17]}']) == {"trace": {"shards": ["0", "17"]}}
    assert parse_config(["run=2024"]) == {"run": 2024}
    with pytest.raises(jsonschema.ValidationError, match="'1000' is not of type 'integer'"):
        jsonschema.validate(parse_config(['realizations={"n_tasks": 1000}']), SCHEMA)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (['realizations={"n_tasks": 1000}'], {"realizations": {"n_tasks": 1000}}),
        (['trace={"source": "google", "shards": 5}'], {"trace": {"source": "google", "shards": 5}}),
        (['trace={"shards": [0, 17, 42]}'], {"trace": {"shards": [0, 17, 42]}}),
        (['trace={"shards": "all"}'], {"trace": {"shards": "all"}}),
        (['trace={"source": "local", "path": "/data/x"}'], {"trace": {"source": "local", "path": "/data/x"}}),
        (['trace={"path": null, "backoff": 0.5, "seed": 0}'], {"trace": {"path": None, "backoff": 0.5, "seed": 0}}),
        (["trace={backoff: 1e-1}"], {"trace": {"backoff": 0.1}}),
        (["scale=tiny", "run=2024"], {"scale": "tiny", "run": "2024"}),
        (["run=007"], {"run": "007"}),  # the text, not str(int("007"))
        (["run=1e5"], {"run": "1e5"}),
        (["run=True"], {"run": "True"}),
        (["run="], {"run": None}),
        (["run=null"], {"run": None}),
        (['placement={"trace": {"event_shards": 3}}'], {"placement": {"trace": {"event_shards": 3}}}),
        (['placement={"trace": {"event_shards": null}}'], {"placement": {"trace": {"event_shards": None}}}),
        (
            ['packing={"sections": {"5.4": {"rebalance": [true, false], "capacity": [1, 2.5], "estimators": {"GPA": [0.1], "av": "all"}}}}'],
            {"packing": {"sections": {"5.4": {"rebalance": [True, False], "capacity": [1, 2.5], "estimators": {"GPA": [0.1], "av": "all"}}}}},
        ),
    ],
)
def test_cli_values_are_typed_by_the_schema(entries, expected):
    got = from_cli(*entries)
    assert same(got, expected), got
    VALIDATOR.validate(got)


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        ("1.5", {"type": "string"}, "1.5"),  # a valid string stays one
        ("true", {"type": "string"}, "true"),
        ("5", {"type": ["string", "integer"]}, "5"),
        ("5", {"type": ["integer", "null"]}, 5),
        ("~", {"type": ["integer", "null"]}, None),
        ("null", {"type": "string"}, "null"),  # null is not allowed: the word is the string
        ("1e3", {"type": "integer"}, 1000),
        ("1.5", {"type": "integer"}, "1.5"),  # not an integer: left for validation to report
        ("nan", {"type": "number"}, "nan"),  # would pass every bound check
        ("inf", {"type": "number"}, "inf"),
        ("abc", {"type": "integer"}, "abc"),
        ("-3", {"type": "integer", "minimum": 0}, -3),  # typed, so the error says "less than the minimum"
        ("[1, 2]", {"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ('{"a": "1"}', {"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}),
        (["1", "x"], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}, [1, "x"]),
        ({"a": "1"}, {"type": "object", "patternProperties": {"^a$": {"type": "integer"}}}, {"a": 1}),
        ("3", {"allOf": [{"type": "integer"}, {"minimum": 1}]}, 3),
        ("2", {"anyOf": [{"type": "string", "enum": ["x"]}, {"type": "boolean"}, {"type": "number"}]}, 2),
        (1000.0, {"type": "integer"}, 1000),
        (2024, {"type": "string"}, "2024"),
        (True, {"type": "boolean"}, True),
    ],
)
def test_coerce_cases(value, schema, expected):
    assert same(coerce(value, schema), expected)


def test_coerce_does_not_modify_its_input():
    raw = {"trace": {"shards": ["1", "2"]}}
    frozen = json.dumps(raw)
    coerce_config(raw, SCHEMA)
    assert json.dumps(raw) == frozen


@pytest.mark.parametrize(
    ("entries", "key", "message"),
    [
        (['realizations={"n_tasks": "many"}'], "realizations.n_tasks", "'many' is not of type 'integer'"),
        (['realizations={"n_tasks": 0}'], "realizations.n_tasks", "0 is less than the minimum of 1"),
        (['trace={"shards": 0}'], "trace.shards", "0 is less than the minimum of 1"),
        (['trace={"shards": [1, "x"]}'], "trace.shards.1", "'x' is not of type 'integer'"),
        (['trace={"backoff": nan}'], "trace.backoff", "'nan' is not of type 'number'"),
        (["run=a/b"], "run", "does not match"),
    ],
)
def test_a_bad_value_still_names_its_key(entries, key, message):
    error = jsonschema.exceptions.best_match(VALIDATOR.iter_errors(from_cli(*entries)))
    assert error is not None
    assert ".".join(map(str, error.absolute_path)) == key
    assert message in error.message


# ----------------------------------------------------------------------------- property: CLI round trip

_TEXT = st.text(st.characters(codec="ascii", categories=("L", "N", "P", "S", "Zs")), max_size=8)


def from_schema(schema: dict) -> st.SearchStrategy:
    """Values of a (subset of) JSON schema: what this project's schemas use. Filtered by validity later."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    branches = schema.get("oneOf") or schema.get("anyOf")
    if branches:
        base = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "default", "description")}
        return st.one_of([from_schema({**base, **b}) for b in branches])
    types = schema.get("type", ["string", "integer", "number", "boolean", "null"])
    types = [types] if isinstance(types, str) else types
    return st.one_of([_of_type(t, schema) for t in types])


def _of_type(t: str, s: dict) -> st.SearchStrategy:
    if t == "null":
        return st.none()
    if t == "boolean":
        return st.booleans()
    if t == "string":
        return st.from_regex(s["pattern"], fullmatch=True).filter(lambda x: len(x) < 20) if "pattern" in s else _TEXT
    lo, hi = s.get("minimum", s.get("exclusiveMinimum")), s.get("maximum", s.get("exclusiveMaximum"))
    if t == "integer":
        return st.integers(
            None if lo is None else math.floor(lo) + ("exclusiveMinimum" in s), None if hi is None else math.ceil(hi) - ("exclusiveMaximum" in s)
        )
    if t == "number":
        floats = st.floats(
            lo, hi, allow_nan=False, allow_infinity=False, exclude_min="exclusiveMinimum" in s, exclude_max="exclusiveMaximum" in s
        )
        return st.one_of(floats, floats.filter(lambda x: abs(x) < 2**53).map(round))
    if t == "array":
        if "prefixItems" in s:
            return st.tuples(*map(from_schema, s["prefixItems"])).map(list)
        items = from_schema(s.get("items", {}))
        lo_n = s.get("minItems", 0)
        return st.lists(items, min_size=lo_n, max_size=min(s.get("maxItems", lo_n + 3), lo_n + 3), unique_by=json.dumps if s.get("uniqueItems") else None)
    if t == "object":
        props = {k: from_schema(v) for k, v in s.get("properties", {}).items()}
        required = set(s.get("required", ()))
        fixed = st.fixed_dictionaries({k: v for k, v in props.items() if k in required}, optional={k: v for k, v in props.items() if k not in required})
        extra = s.get("additionalProperties", True)
        if isinstance(extra, dict):
            more = st.dictionaries(_TEXT.filter(lambda k: k not in props), from_schema(extra), min_size=s.get("minProperties", 0), max_size=2)
            return st.tuples(fixed, more).map(lambda p: {**p[1], **p[0]})
        return fixed
    raise AssertionError(t)


def _has_null_word_where_null_is_allowed(value) -> bool:
    """The one ambiguity: Snakemake's BaseLoader makes ``null`` and ``"null"`` the same string."""
    if isinstance(value, str):
        return value.strip() in NULL_WORDS
    if isinstance(value, dict):
        return any(map(_has_null_word_where_null_is_allowed, value.values()))
    if isinstance(value, list):
        return any(map(_has_null_word_where_null_is_allowed, value))
    return False


def cli_entry(key: str, value) -> str:
    """``KEY=TEXT`` as a user types it: a top-level string as is, anything else as JSON (after the shell)."""
    return f"{key}={value}" if isinstance(value, str) else f"{key}={json.dumps(value)}"


_SECTION = st.sampled_from(sorted(SCHEMA["properties"])).flatmap(
    lambda key: st.tuples(st.just(key), from_schema(SCHEMA["properties"][key]))
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_SECTION)
def test_any_valid_value_survives_the_command_line(section):
    key, value = section
    if not VALIDATOR.is_valid({key: value}) or _has_null_word_where_null_is_allowed(value):
        return
    entry = cli_entry(key, value)
    assert same(from_cli(entry), {key: value}), (entry, parse_config([entry]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_SECTION)
def test_coercion_is_idempotent_and_keeps_valid_typed_configs(section):
    key, value = section
    if not VALIDATOR.is_valid({key: value}):
        return
    once = coerce_config({key: value}, SCHEMA)
    assert same(coerce_config(once, SCHEMA), once)
    if not _has_null_word_where_null_is_allowed(value):
        assert same(once, {key: value})  # a config.yaml value that is already valid is left alone


# ----------------------------------------------------------------------------- README and docs commands


def _invocations_at(text: str) -> list[tuple[int, str, dict[str, str], list[str]]]:
    """(offset, the command's text up to and with its ``snakemake`` word, environment assignments before it, argv
    after it) of each ``snakemake`` command of a page; a bare ``--config ...`` example counts as ``snakemake --config``.
    """
    out = []
    for offset, snippet in snippets_at(text):
        try:
            words = shlex.split(snippet)
        except ValueError:
            continue
        at = next((i for i, w in enumerate(words) if w == "snakemake" or w.endswith("/snakemake")), None)
        if at is not None:
            env = dict(w.split("=", 1) for w in words[:at] if re.fullmatch(r"[A-Z_]+=.*", w))
            head = re.match(r"(.*?)(?:^|(?<=\s))\S*snakemake(?=\s|$)", snippet).group(0)
            out.append((offset, head, env, words[at + 1 :]))
        elif words and words[0] == "--config":
            out.append((offset, "snakemake", {}, words))
    return out


def readme_invocations(text: str) -> list[tuple[dict[str, str], list[str]]]:
    """(environment assignments before it, argv after ``snakemake``) of each README command.

    A bare ``--config ...`` example counts as one.
    """
    return [(env, argv) for _, _, env, argv in _invocations_at(text)]


def doc_invocations() -> list[tuple[str | None, str, list[str]]]:
    """Each ``snakemake`` command of README.md and the docs' pages, once: (the activation it runs after, its text up
    to and with ``snakemake``, argv after it)."""
    seen = {}
    for page in doc_files():
        for offset, head, _, argv in _invocations_at(page.read_text()):
            seen.setdefault((page_activation(page, offset), head, tuple(argv)), None)
    return [(act, head, list(argv)) for act, head, argv in seen]


def readme_commands(text: str) -> list[list[str]]:
    """argv after ``snakemake`` of each README command; a bare ``--config ...`` example counts as one."""
    return [argv for _, argv in readme_invocations(text)]


def test_readme_commands_are_found():
    cmds = readme_commands(doc_text())
    joined = [" ".join(c) for c in cmds]
    assert "--cores 2" in joined and "--cores 2" in [" ".join(c) for c in readme_commands(README.read_text())]
    # every page that shows a command is read: README.md and the docs' pages (getting started, sources, fidelity...)
    assert README in doc_files() and REPO / "docs/sources/azure.md" in doc_files()
    assert any("azure-sample" in c for c in joined) and any("--workflow-profile" in c for c in cmds)
    assert any(c[:1] == ["--report"] for c in cmds)
    assert any('realizations={"n_tasks": 1000}' in c for c in cmds)
    assert readme_commands("x `snakemake -n --config run=a` y\n```bash\nA=1 .venv/bin/snakemake --cores 1 && ls\n```\n") == [
        ["-n", "--config", "run=a"],
        ["--cores", "1"],
    ]


@pytest.mark.slow  # runs snakemake --version in shells
def test_a_bare_command_runs_only_after_the_stated_activation(tmp_path):
    """The check bites: in the tests' shell (PATH without the venv) a bare ``snakemake`` is not found, and the
    activation the README states finds the venv's; a page that shows a bare command without stating the activation
    (and is not a docs page under the home page's declaration) gets none."""
    import snakemake as smk

    venv_checkout(tmp_path)
    if shutil.which("snakemake", path=bare_path()):
        pytest.skip("a snakemake outside the venv is on PATH: a bare command would find it")
    bare = shell("snakemake --version", tmp_path)
    assert bare.returncode == 127 and "snakemake: command not found" in bare.stderr
    activated = shell(f"{ACTIVATE}\nsnakemake --version", tmp_path)
    assert activated.returncode == 0 and activated.stdout.strip() == smk.__version__, activated.stderr
    # the Quick start's own PATH prefix works without the activation, for its one command
    quick = shell('PATH="$PWD/.venv/bin:$PATH" snakemake --version && snakemake --version', tmp_path)
    assert quick.returncode == 127 and quick.stdout.strip() == smk.__version__  # found once, then not
    # which activation each command gets
    page = "Run `snakemake --cores 2`.\n\nActivate: `source .venv/bin/activate`.\n\n```bash\nsnakemake -n\n```\n"
    (first, _), (_, _), (last, _) = snippets_at(page)
    assert activation_for(page, first, declared=False) is None and activation_for(page, last, declared=False) == ACTIVATE
    assert activation_for("`snakemake -n`", 0, declared=False) is None and activation_for("`snakemake -n`", 0, True) == ACTIVATE
    # README: the Quick start's commands run without it, every later one after it; the docs' pages under the home
    # page's declaration, which Getting started's activation backs
    assert docs_declare_activation()
    readme = README.read_text()
    assert page_activation(README, readme.index("--cores 2")) is None
    assert page_activation(README, readme.index("snakemake --report")) == ACTIVATE
    assert page_activation(REPO / "docs/fidelity.md", 0) == ACTIVATE
    started = (REPO / "docs/getting-started.md").read_text()
    assert page_activation(REPO / "docs/getting-started.md", started.index("--cores 2")) is None


def test_documented_commands_are_written_bare_after_the_activation():
    """One style: only the Quick start's two commands name ``.venv/bin/``; each page states or inherits the
    activation before its first bare command."""
    for page in doc_files():
        text = page.read_text()
        for offset, code in snippets_at(text):
            if ".venv/bin/" in code and "activate" not in code:
                # a chain's parts share its line's offset: the Quick start's lines make the venv, then use it
                assert text.startswith("python3 -m venv .venv && .venv/bin/pip install -e ", offset), \
                    f"{page.name}: {code!r} names .venv/bin/; write it bare, after the activation"
            words = code.split()
            if words and words[0] in ("snakemake", "python", "pytest", "mkdocs", "pip"):
                assert page_activation(page, offset), f"{page.name}: {code!r} before any activation stated"


def _executor_missing(argv: list[str], workdir: Path) -> bool:
    """Whether the command's workflow profile names an executor whose plugin is not installed."""
    if "--workflow-profile" not in argv:
        return False
    profile = workdir / argv[argv.index("--workflow-profile") + 1]
    executor = yaml.safe_load((profile / "config.yaml").read_text()).get("executor", "local")
    if executor in ("local", "dryrun", "touch"):
        return False
    import importlib.util

    return importlib.util.find_spec(f"snakemake_executor_plugin_{executor}") is None


def _local_paths_to_sample(argv: list[str], workdir: Path) -> list[str]:
    """A ``trace.path`` that does not exist here (the README's /data/...) becomes a copy of the shipped sample."""
    out = []
    for word in argv:
        m = re.fullmatch(r"trace=(\{.*\})", word)
        if m:
            section = yaml.safe_load(m.group(1))
            if isinstance(section, dict) and section.get("path") and not Path(section["path"]).is_dir():
                copy = workdir / "data" / Path(section["path"]).name
                if not copy.exists() and "azure" in section["path"]:  # the Azure sample in the dataset's layout
                    azure_dataset_layout(copy)
                elif not copy.exists():
                    shutil.copytree(SAMPLE, copy)
                word = "trace=" + json.dumps({**section, "path": str(copy)})
        out.append(word)
    return out


def _checkout(workdir: Path) -> None:
    """``workdir`` as a checkout looks to a command run from the repository root: config.yaml, profiles/, the
    Quick start's .venv (wfutil.venv_checkout)."""
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    venv_checkout(workdir)
    for folder in ("profiles", "examples"):
        (workdir / folder).symlink_to(REPO / folder, target_is_directory=True)


#: Each command of README.md and the docs, once (the README repeats a few of the docs' commands), with the
#: activation it runs after.
_DOCUMENTED = doc_invocations()
_COMMANDS = [(act, head, argv) for act, head, argv in _DOCUMENTED if "--report" not in argv]


def _slow(argv: list[str]) -> list:
    """The paper scale's dry run builds a DAG of 3,000+ jobs (about a minute): run it with the workflow tests."""
    return [pytest.mark.workflow] if any(w.startswith("scale=paper") for w in argv) else []


def _shell_command(activation: str | None, head: str, args: list[str], workdir: Path) -> str:
    """The command as a user's shell runs it: the activation the docs state before it, then its text up to and with
    ``snakemake`` as written (``PATH=... snakemake`` included), this checkout's Snakefile, the arguments."""
    run = f"{head} -s {shlex.quote(str(REPO / 'Snakefile'))} -d {shlex.quote(str(workdir))} {shlex.join(args)}"
    return f"{activation}\n{run}" if activation else run


@pytest.mark.slow  # each a Snakemake dry run
@pytest.mark.parametrize(
    "activation, head, argv",
    [pytest.param(a, h, c, marks=_slow(c), id=f"{'activated: ' if a else ''}{h} {' '.join(c)}") for a, h, c in _COMMANDS],
)
def test_readme_command_dry_runs(tmp_path, activation, head, argv):
    """Each documented command, verbatim, as a dry run (nothing is downloaded), in a shell without the venv on PATH
    but for the activation the page (or the docs' home page, for every docs page) has stated before it: a bare
    ``snakemake`` the text has not activated is ``command not found``.

    Special cases, each because this machine is not the user's: a ``trace.path`` that does not exist here
    is replaced by a copy of the shipped sample; a profile's executor whose plugin is not installed
    (slurm, kubernetes) is replaced by Snakemake's ``dryrun`` executor (the rest of the profile applies).
    """
    _checkout(tmp_path)
    args = _local_paths_to_sample(argv, tmp_path)
    if _executor_missing(args, tmp_path):
        args += ["--executor", "dryrun"]
    if "--unlock" not in args:
        args = ["-n", *args]
    res = shell(_shell_command(activation, head, args, tmp_path), tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"{head} {shlex.join(argv)} failed (after {activation!r}):\n{out[-5000:]}"
    if "--unlock" not in args:
        assert "This was a dry-run" in out or "Nothing to be done" in out, out[-3000:]
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()


#: The documented --report commands: of the default run (no --config), and of another run (with its --config).
_REPORTS = [(a, h, c) for a, h, c in _DOCUMENTED if "--report" in c]


def _report_path(argv: list[str]) -> str:
    return argv[argv.index("--report") + 1]


@pytest.mark.workflow
@pytest.mark.parametrize("activation, head, argv", [r for r in _REPORTS if "--config" not in r[2]], ids=lambda x: str(x))
def test_readme_report_command_builds_the_report(tiny_run, tmp_path, activation, head, argv):
    """``--report`` reads a finished run: run in a copy of the tiny run (no dry run exists), in a shell as the dry
    runs above. The documented command reports the default run, ``results/synthetic-default/``, which the tiny run's
    config does not name: verbatim it is refused, naming both runs; into the tiny run's directory it builds the
    tiny run's report (Snakemake does not create the report's directory: it is made first).
    """
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    venv_checkout(work)
    assert _report_path(argv).startswith("results/synthetic-default/")
    res = shell(_shell_command(activation, head, argv, work), work)
    assert res.returncode != 0 and "is in the directory of run synthetic-default, but this config's run is " \
        "synthetic-tiny" in res.stdout + res.stderr and "add --config scale=default" in res.stdout + res.stderr
    assert not (work / "results/synthetic-default").exists()
    argv = [w.replace("results/synthetic-default/", "results/synthetic-tiny/") for w in argv]
    report = work / _report_path(argv)
    report.parent.mkdir(parents=True, exist_ok=True)
    res = shell(_shell_command(activation, head, argv, work), work)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
    assert "never awaited" not in res.stdout + res.stderr  # Snakemake's harmless warning is filtered (Snakefile)
    html = report.read_text(errors="replace")
    assert "<html" in html.lower() and "synthetic-tiny" in html  # it says which run it shows
    # it embeds every figure of the run, byte for byte (not a stale copy, not a placeholder of empty axes)
    embedded = dict(re.findall(r'"(results/synthetic-tiny/figures/[^"]+\.png)": \{.*?"data_uri": "data:image/png;[^,]*?base64,([A-Za-z0-9+/=]+)"',
                               html, re.DOTALL))
    figures = sorted((work / "results/synthetic-tiny/figures").glob("*.png"))
    assert sorted(embedded) == [p.relative_to(work).as_posix() for p in figures]
    assert all(base64.b64decode(embedded[p.relative_to(work).as_posix()]) == p.read_bytes() for p in figures)
    # and every table and rendered notebook of the run (each result in the report is keyed by its path)
    run = work / "results/synthetic-tiny"
    listed = sorted(p.relative_to(work).as_posix() for p in [*run.glob("tables/*.csv"), *run.glob("notebooks/*.html")])
    assert len([p for p in listed if p.endswith(".html")]) == 5
    assert [p for p in listed if f'"{p}": {{' not in html] == []


def test_report_path_names_its_run():
    from colocate.report.which_run import config_for, mismatch, report_run

    assert report_run("results/sample-default/report.html") == report_run("./results/sample-default/r.zip") == "sample-default"
    assert report_run("report.html") is None and report_run("results/report.html") is None and report_run(None) is None
    sources, scales = ["synthetic", "sample", "google", "azure-sample"], ["tiny", "default", "paper"]
    default = {"trace": {"source": "synthetic"}, "scale": "default", "run": None}
    assert mismatch("results/synthetic-default/report.html", "synthetic-default", default, sources, scales) is None
    assert mismatch("elsewhere/report.html", "synthetic-default", default, sources, scales) is None
    why = mismatch("results/sample-default/report.html", "synthetic-default", default, sources, scales)
    assert "run sample-default" in why and "run is synthetic-default" in why
    assert "add --config trace='{\"source\": \"sample\"}' (or" in why
    # only the settings that differ from the configured run's; a run named by hand keeps its name
    tiny = {"trace": {"source": "synthetic"}, "scale": "tiny", "run": None}
    assert config_for("sample-default", tiny, sources, scales) == "--config trace='{\"source\": \"sample\"}' scale=default"
    assert config_for("synthetic-paper", default, sources, scales) == "--config scale=paper"
    assert config_for("n1000", default, sources, scales).startswith("--config run=n1000 and the other settings")
    assert config_for("local-data", default, sources, scales).startswith("--config run=local-data and")


@pytest.mark.slow  # two Snakemake starts
@pytest.mark.parametrize("activation, head, argv", [r for r in _REPORTS if "--config" in r[2]], ids=lambda x: str(x))
def test_a_report_of_another_run_is_refused_naming_both_runs(tmp_path, activation, head, argv):
    """The documented report of another run, in a checkout (default config): without its ``--config`` it stops before
    the report is built, naming both runs and that very ``--config``; as documented, the run is the report's (no
    such run has finished here: Snakemake then names a missing result of it)."""
    _checkout(tmp_path)
    at = argv.index("--config")
    (other,) = {_report_path(argv).split("/")[1]}
    res = shell(_shell_command(activation, head, argv[:at], tmp_path), tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and f"is in the directory of run {other}" in out, out[-3000:]
    assert "this config's run is synthetic-default" in out
    assert shlex.split(re.search(r"add (--config .*?) \(or", out).group(1)) == argv[at:]  # the --config shown
    res = shell(_shell_command(activation, head, argv, tmp_path), tmp_path)
    out = res.stdout + res.stderr
    assert "is in the directory of run" not in out and f"results/{other}/" in out and "does not exist" in out, out[-3000:]
    assert not (tmp_path / "results").exists()


# ----------------------------------------------------------------------------- profiles


def _start(workdir: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args],
        cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def _run(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """``snakemake ARGS`` as the README writes it (no --cores added), from ``workdir``."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args],
        cwd=workdir, env=env, capture_output=True, text=True,
    )


def _seconds_from_last_line_to_exit(workdir: Path, *args: str, deadline: float = 300) -> tuple[int, str, float]:
    """``snakemake ARGS``: its return code, its output, and the seconds between its last line and its exit.

    The default profile's job rate limit spans 10 minutes (profiles/default/config.yaml), and each scheduler
    pass that finds a job to run leaves a timer of that span, a non-daemon thread the process would wait for.
    The run's hooks cancel them (workflow/rules/resume.smk): a run that is done, or has failed, exits at once.
    A run still alive after ``deadline`` seconds is killed and fails the test.
    """
    proc = _start(workdir, *args)
    lines, stamps = [], [time.monotonic()]

    def read() -> None:
        for line in proc.stdout:  # ends when the process exits and its pipe closes
            lines.append(line)
            stamps.append(time.monotonic())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"snakemake {' '.join(args)} still running after {deadline} s:\n{''.join(lines)[-2000:]}")
    exited = time.monotonic()
    reader.join()
    return proc.returncode, "".join(lines), exited - stamps[-1]


def test_profiles_live_where_snakemake_looks():
    assert (REPO / "profiles" / "default" / "config.yaml").is_file()
    assert not (REPO / "workflow" / "profiles").exists()
    default = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())
    assert default["rerun-incomplete"] is True and default["show-failed-logs"] is True and default["latency-wait"] > 0
    # the job rate limit (there to keep the scheduler from re-running itself, see the profile) admits at least
    # Snakemake's default 100 jobs a second, so it never holds a local job back, over a span longer than a default
    # run (with a 5 s span the 2-shard slice still took 9:04 against 7:30: the profile)
    limit = MaxJobsPerTimespan.parse_choice(default["max-jobs-per-timespan"])
    assert limit.max_jobs / limit.timespan >= 100 and limit.timespan >= 600
    for name in ("slurm", "kubernetes"):
        assert (REPO / "profiles" / name / "config.yaml").is_file()
    text = doc_text()
    assert "workflow/profiles" not in text and "--workflow-profile profiles/slurm" in text


@pytest.mark.slow  # two Snakemake starts and a job
def test_default_profile_is_picked_up_beside_the_snakefile(tmp_path):
    """Run from another directory with -s, as the tests do: the profile beside the Snakefile applies.

    Observable: Snakemake names it, and ``cores: 2`` from it lets a real (not dry) run start without --cores,
    where ``--workflow-profile none`` makes Snakemake ask for --cores. (rerun-incomplete: see the kill test.)
    """
    write_config(tmp_path)
    res = _run(tmp_path, "--workflow-profile", "none", "synthesize_trace")
    assert res.returncode != 0 and "cores have to be specified" in res.stdout + res.stderr
    # the cheapest real job: a few seconds at the tiny scale
    code, out, exit_delay = _seconds_from_last_line_to_exit(tmp_path, "synthesize_trace")
    assert f"workflow specific profile {REPO / 'profiles' / 'default'}" in out
    assert code == 0, out[-3000:]
    assert re.search(r"Provided cores: 2\b", out), out[-3000:]
    assert exit_delay < 60, f"exited {exit_delay:.0f} s after its last line (the profile's timers: 600 s)"


TARGET = "results/synthetic-tiny/tables/task_counts.csv"
#: Deterministic outputs of TARGET's DAG (a synthetic trace, its map, reduce and collect steps).
COMPARED = [
    "results/synthetic-tiny/tables/task_counts.csv",
    "results/synthetic-tiny/summary/tasks.csv",
    "results/synthetic-tiny/tasks/task_stats.parquet",
    "results/synthetic-tiny/tasks/long_tasks.parquet",
    "results/synthetic-tiny/map/task_events/batch-00000-00001-of-00002.parquet",  # both shards: shards_per_map
]


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 120) -> None:
    """SIGKILL ``proc``'s whole process group (Snakemake and its running job) once ``ready()`` holds."""
    t0 = time.monotonic()
    while not ready():
        assert proc.poll() is None, f"the run ended before it could be killed:\n{proc.stdout.read()[-3000:]}"
        assert time.monotonic() - t0 < timeout, "the run never reached the kill point"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _mid_run(workdir: Path):
    """Some outputs exist, and a job is running (Snakemake marked its outputs incomplete)."""

    def ready() -> bool:
        done = list((workdir / "results/synthetic-tiny/map").rglob("*.parquet"))
        incomplete = workdir / ".snakemake" / "incomplete"
        return bool(done) and incomplete.is_dir() and any(incomplete.iterdir())

    return ready


@pytest.mark.workflow
def test_kill_9_mid_run_then_the_readme_command_finishes_it(tmp_path):
    clean = tmp_path / "clean"
    clean.mkdir()
    write_config(clean)
    snakemake(clean, TARGET)

    work = tmp_path / "killed"
    work.mkdir()
    write_config(work)
    proc = _start(work, "--cores", "1", TARGET)
    _kill_when(proc, _mid_run(work))
    assert not (work / TARGET).exists()
    cut = [base64.b64decode(m.name).decode() for m in (work / ".snakemake" / "incomplete").iterdir()]
    assert cut
    # The job was killed while it ran. Whether it had begun writing is a race; make it deterministic by
    # leaving what a kill mid-write leaves: a half-written output under the marked name.
    for rel in cut:
        if not (work / rel).exists():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(b"PAR1 half-written")

    # the dead run's lock is found stale (its process is gone) and removed; without the profile's
    # rerun-incomplete, the cut job's output then blocks the run (the issue's symptom)
    res = _run(work, "--workflow-profile", "none", "--cores", "2", TARGET)
    out = res.stdout + res.stderr
    assert "removed the lock left by a run that was killed" in out and "Directory cannot be locked" not in out
    assert res.returncode != 0 and "IncompleteFilesException" in out
    # the README's command (with the profile picked up) redoes the cut job and finishes the run
    res = _run(work, "--cores", "2", TARGET)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
    for rel in COMPARED + cut:  # the cut job's outputs too: redone, not kept half-written
        assert (work / rel).read_bytes() == (clean / rel).read_bytes(), rel
    (trace_clean,) = (clean / "resources/trace").glob("synthetic-*")
    (trace_work,) = (work / "resources/trace").glob("synthetic-*")
    assert (trace_work / "SHA256SUM").read_text() == (trace_clean / "SHA256SUM").read_text()
    assert not list(work.rglob("*.tmp"))


@pytest.mark.workflow
def test_a_second_start_gets_the_lock_message(tmp_path):
    """A second start while the first runs is refused with Snakemake's lock message, and the first finishes.

    The first run is stopped (SIGSTOP) at the mid-run point while the second starts, so it still holds the lock
    however slowly the second starts on a loaded machine (it could finish first otherwise, seen in CI)."""
    write_config(tmp_path)
    first = _start(tmp_path, "--cores", "1", TARGET, "results/synthetic-tiny/realizations/tasks.parquet")
    try:
        ready = _mid_run(tmp_path)
        t0 = time.monotonic()
        while not ready():
            assert first.poll() is None and time.monotonic() - t0 < 120
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGSTOP)
        try:
            second = _run(tmp_path, "--cores", "2", TARGET)
        finally:
            os.killpg(first.pid, signal.SIGCONT)
        out = second.stdout + second.stderr
        assert second.returncode != 0
        assert "LockException" in out and "Directory cannot be locked" in out
        assert "IncompleteFilesException" not in out
        out_first, _ = first.communicate(timeout=180)
        assert first.returncode == 0, out_first[-4000:]  # the second start did not disturb the first
        assert (tmp_path / TARGET).is_file()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()


# ----------------------------------------------------------------------------- failures you can read


@pytest.mark.workflow
def test_a_failing_script_leaves_its_traceback_in_its_log_and_no_tmp(tmp_path):
    trace = tmp_path / "trace"
    shutil.copytree(SAMPLE, trace)
    (trace / "SHA256SUM").unlink()  # else verify_local_trace catches the corruption first
    shard = trace / "task_events" / "part-00000-of-00500.csv.gz"
    shard.write_bytes(b"not a gzip file\n")
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(trace)}, run="corrupt")
    # the sample's three task_events shards are mapped by one job (mapreduce.shards_per_map)
    code, out, exit_delay = _seconds_from_last_line_to_exit(
        work, "--cores", "2", "results/corrupt/map/task_events/batch-00000-00002-of-00500.parquet")
    assert code != 0
    assert exit_delay < 60, f"exited {exit_delay:.0f} s after its last line (the profile's timers: 600 s)"
    log = (work / "results/corrupt/logs/map_task_events/batch-00000-00002-of-00500.log").read_text()
    assert "Traceback (most recent call last)" in log
    assert "TraceFormatError" in log and "corrupt gzip" in log and str(shard) in log
    assert "Traceback" in out  # still on the console too
    assert not list(work.rglob("*.tmp")) and not list(trace.rglob("*.tmp"))


def test_uncaught_exception_is_logged_with_traceback(tmp_path):
    log = tmp_path / "rule.log"
    script = tmp_path / "script.py"
    script.write_text(
        "from colocate import logs\n"
        f"log = logs.to_file({str(log)!r})\n"
        "log.info('started')\n"
        "def inner():\n"
        "    raise RuntimeError('shard 7 is corrupt')\n"
        "inner()\n"
    )
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert res.returncode == 1
    text = log.read_text()
    assert "started" in text and "Traceback (most recent call last)" in text
    assert "in inner" in text and "RuntimeError: shard 7 is corrupt" in text
    assert "RuntimeError: shard 7 is corrupt" in res.stderr  # printed as usual


def test_uncaught_exception_in_a_thread_is_logged(tmp_path):
    log = tmp_path / "rule.log"
    script = tmp_path / "script.py"
    script.write_text(
        "import threading\nfrom colocate import logs\n"
        f"logs.to_file({str(log)!r})\n"
        "logs.to_file(" + repr(str(log)) + ")\n"  # twice: the hook must not chain itself
        "t = threading.Thread(target=lambda: 1 / 0, name='worker'); t.start(); t.join()\n"
    )
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    text = log.read_text()
    assert "thread worker" in text and "ZeroDivisionError" in text
    assert text.count("ZeroDivisionError: division by zero") == 1
    assert "ZeroDivisionError" in res.stderr


@pytest.mark.parametrize("writer", ["write_parquet", "write_bucketed"])
def test_failed_parquet_write_leaves_no_tmp(tmp_path, monkeypatch, writer):
    df = pl.DataFrame({"bucket": [0, 1, 1], "x": [1.0, 2.0, 3.0]})
    out = tmp_path / "sub" / "out.parquet"

    def half_written(self, file, **kw):
        Path(file).write_bytes(b"PAR1 half")  # the temporary exists, then the write fails
        raise OSError("disk full")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", half_written)
    call = (lambda: cio.write_parquet(df, out)) if writer == "write_parquet" else (lambda: cio.write_bucketed(df, out, 2))
    with pytest.raises(OSError, match="disk full"):
        call()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub"]
    monkeypatch.undo()
    call()  # and a good write still works, leaving only the output
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.parquet"]
    assert pl.read_parquet(out).sort("x").equals(df)


def test_failed_rename_leaves_no_tmp(tmp_path, monkeypatch):
    def no_rename(src, dst):
        raise PermissionError("read-only destination")

    monkeypatch.setattr(cio.os, "replace", no_rename)
    with pytest.raises(PermissionError):
        cio.write_parquet(pl.DataFrame({"x": [1]}), tmp_path / "out.parquet")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # a Snakemake start each
@pytest.mark.parametrize(
    "url", ["file:///data/clusterdata-2011-2", "http://storage.googleapis.com/clusterdata-2011-2", "gs://clusterdata-2011-2"]
)
def test_unsafe_trace_url_is_rejected_at_start_up(tmp_path, url):
    """Before any job: the manifest the shards are verified against comes over https only."""
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    res = _run(tmp_path, "-n", "--config", f'trace={{"source": "google", "url": "{url}"}}')
    out = res.stdout + res.stderr
    assert res.returncode != 0 and f"config key trace.url: {url!r} is rejected" in out, out[-3000:]
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()


@pytest.mark.workflow
@pytest.mark.parametrize("owner", ["this-host-dead-pid", "other-host", "this-host-live-pid"])
def test_only_a_lock_whose_run_is_gone_from_this_host_is_removed(tmp_path, owner):
    """workflow/rules/resume.smk: a lock is stale only when every run recorded for it has ended on this host."""
    import socket

    write_config(tmp_path)
    locks, owners = tmp_path / ".snakemake/locks", tmp_path / ".snakemake/colocate-lock-owners"
    locks.mkdir(parents=True)
    owners.mkdir(parents=True)
    (locks / "0.output.lock").write_text(TARGET + "\n")
    gone = subprocess.Popen(["true"])
    gone.wait()
    name = {
        "this-host-dead-pid": f"{socket.gethostname()}-{gone.pid}",
        "other-host": f"some-head-node-{gone.pid}",
        "this-host-live-pid": f"{socket.gethostname()}-{os.getpid()}",
    }[owner]
    (owners / name).touch()
    res = _run(tmp_path, "--cores", "1", TARGET, "--dry-run")
    removed = "removed the lock left by a run that was killed" in res.stdout + res.stderr
    assert removed == (owner == "this-host-dead-pid")
    assert (locks / "0.output.lock").exists() != removed


def test_fill_defaults_sets_absent_keys_recursively_and_keeps_what_is_set():
    schema = {"properties": {"seed": {"default": 3}, "name": {"type": "string"},
                             "bsa": {"type": "object", "default": {}, "properties": {"budget": {"default": 16},
                                                                                       "alpha": {"default": 0.5}}}}}
    assert fill_defaults({}, schema) == {"seed": 3, "bsa": {"budget": 16, "alpha": 0.5}}
    given = {"seed": 9, "bsa": {"budget": 4}}
    assert fill_defaults(given, schema) == {"seed": 9, "bsa": {"budget": 4, "alpha": 0.5}} and given["seed"] == 9
    # the whole schema: the placement section's Table I, as the pipeline resolves it
    placement = fill_defaults({}, SCHEMA)["placement"]
    assert placement["seed"] == 2018 and placement["pod_types"]["A"] == {"demand": [2, 24, 0], "load": 0.15}
    # a default is copied, not shared: filling twice gives independent objects
    a, b = fill_defaults({}, schema), fill_defaults({}, schema)
    a["bsa"]["budget"] = 1
    assert b["bsa"]["budget"] == 16
