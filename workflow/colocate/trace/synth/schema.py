"""The config schema of the ``synthetic`` section, generated from :class:`~colocate.trace.synth.params.SynthParams`.

Each field of SynthParams declares its default, its docstring (its source in
the papers) and its JSON-schema fragment; :func:`json_schema` assembles them
into the schema Snakemake validates the config with, and fills the defaults
from (``workflow/schemas/synthetic.schema.yaml``, via ``$ref`` from
config.schema.yaml). The schema adds ``shards``, which sizes the written trace
rather than the model. Regenerate the file after editing SynthParams::

    python -m colocate.trace.synth.schema            # writes workflow/schemas/synthetic.schema.yaml
    python -m colocate.trace.synth.schema --check    # exit 1 if the file is out of date

tests/test_synth.py fails while the checked-in file differs from :func:`render`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import yaml

from colocate.trace.synth.params import SynthParams, integer

#: The generated file, in the repository (workflow/schemas, beside the other config schemas).
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "schemas" / "synthetic.schema.yaml"
COMMAND = "python -m colocate.trace.synth.schema"
HEADER = (
    "# The `synthetic` section of config.yaml: parameters of colocate.trace.synth.\n"
    f"# GENERATED from colocate.trace.synth.params.SynthParams by `{COMMAND}`: do not edit by hand;\n"
    "# edit the field's default, doc or constraints in params.py and run the command again.\n"
)
_SCALED = " Scale-dependent (set by the scale preset)."
#: Not a model parameter: how many files each table is split into (set by the scale preset).
SHARDS = {
    "type": "object",
    "description": "Shard count per table (from scale). machine_events is always one file.",
    "additionalProperties": False,
    "properties": {table: integer(1) for table in ("task_usage", "task_events", "job_events")},
}


def _default(f: dataclasses.Field):
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def json_schema() -> dict:
    """The JSON schema (draft 2020-12) of the ``synthetic`` config section, as a plain dict.

    One property per SynthParams field: its schema fragment, its default, and its docstring as the
    description (plus a note on the scale-dependent fields), after ``shards``.
    """
    fields = dataclasses.fields(SynthParams)
    props = {"shards": SHARDS}
    for f in fields:
        doc = f.metadata["doc"] + (_SCALED if f.metadata["scaled"] else "")
        props[f.name] = {**f.metadata["schema"], "default": _default(f), "description": doc}
    scaled = ", ".join([f.name for f in fields if f.metadata["scaled"]] + ["shards"])
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "colocate synthetic trace model",
        "description": "Parameters of the synthetic workload model (colocate.trace.synth.SynthParams). Defaults are "
        f"the papers' values at full trace scale; scale-dependent keys ({scaled}) come from the scale preset in "
        "scales.yaml.",
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": props,
    }
    # A JSON round trip: tuples become lists, and fragments shared between fields are written out in full
    # (YAML would otherwise write them as anchors and aliases).
    return json.loads(json.dumps(schema))


class _Dumper(yaml.SafeDumper):
    """YAML that writes a list of scalars ([0.25, 10.0]) and an undocumented schema of scalars
    ({type: number, minimum: 0}) on one line, so tables read as rows and bounds as one item each."""


def _flat(data: list | dict) -> bool:
    """A list of scalars, or a mapping of scalars and lists of scalars."""
    if isinstance(data, list):
        return not any(isinstance(x, (list, dict)) for x in data)
    return all(not isinstance(x, dict) and (not isinstance(x, list) or _flat(x)) for x in data.values())


def _list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_flat(data))


def _dict(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    flow = _flat(data) and "description" not in data and bool(data)
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


_Dumper.add_representer(list, _list)
_Dumper.add_representer(dict, _dict)


def render() -> str:
    """The text of ``synthetic.schema.yaml``: the header comment, then :func:`json_schema` as YAML."""
    return HEADER + yaml.dump(json_schema(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=115)


def main(argv: list[str] | None = None) -> int:
    """Write the schema file (or, with ``--check``, report whether it is up to date)."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=SCHEMA_PATH, help="output file (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from the generated schema")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.exists() else None
        if current != text:
            print(f"{args.path} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
