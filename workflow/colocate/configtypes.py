"""Type the values of Snakemake's ``--config`` by the config schema.

Snakemake 9 parses ``--config KEY=VALUE`` (``snakemake.cli.parse_config``) by trying, in order, ``int``,
``float``, ``True``/``False`` and ``yaml.load(..., Loader=BaseLoader)``. The YAML *BaseLoader* builds
dicts and lists but never types a scalar, so every number, boolean or null *inside* a nested value stays a
string: ``--config 'realizations={"n_tasks": 1000}'`` gives ``{"realizations": {"n_tasks": "1000"}}``, and
the schema then rejects ``'1000' is not of type 'integer'``. A top-level value can also be typed too
eagerly: ``--config run=2024`` gives the int 2024 where the schema wants a string (and ``run=007`` the
int 7: :func:`coerce_config` takes the raw text back from the command line).

:func:`coerce` walks a config alongside its JSON schema (draft 2020-12, file ``$ref`` already inlined) and
retypes what the command line left untyped: a string where the schema wants an integer, a number, a
boolean, null, an array or an object; an int, float or bool where it wants a string. A value the schema
already accepts is kept (``"1.5"`` stays a string under ``type: string``), except that a YAML null word
(``null``, ``~``) becomes None where the schema allows null: the BaseLoader leaves ``{"path": null}`` and
``{"path": "null"}`` indistinguishable, and the unquoted null is the likelier intent. A value that fits no
type is returned as given, so validation still reports it under its own key. Pure: no files, no I/O.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["cli_text", "coerce", "coerce_config", "config_schema", "changed_settings"]

#: YAML 1.2 core-schema spellings of null and of the booleans.
NULL_WORDS = frozenset({"null", "Null", "NULL", "~"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NO = object()  # "this string does not spell a value of that type"
_TYPE_ORDER = ("null", "integer", "number", "boolean", "array", "object")


def config_schema(schemas: Path) -> dict[str, Any]:
    """The whole config schema: ``config.schema.yaml`` plus one section per other ``<name>.schema.yaml``.

    A stage's section schema is found by its file name (``failures.schema.yaml`` is the ``failures``
    section), so adding a stage adds no line here; every file ``$ref`` is inlined, so validation needs
    no resolver. Reads files (the one impure function of this module, used by the Snakefile and tests).
    """
    schemas = Path(schemas)
    main = yaml.safe_load((schemas / "config.schema.yaml").read_text())
    for path in sorted(schemas.glob("*.schema.yaml")):
        section = path.name.removesuffix(".schema.yaml")
        if section != "config":
            main["properties"].setdefault(section, {"$ref": path.name})
    return _inline_refs(main, schemas)


def fill_defaults(instance: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Set every absent key of ``instance`` that has a default in ``schema``, recursively into nested objects (Snakemake's
    set_default stops at $ref; :func:`config_schema` inlines them); returns ``instance``."""
    for key, sub in schema.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if isinstance(instance.get(key), dict):
            fill_defaults(instance[key], sub)
    return instance


def changed_settings(config: Mapping[str, Any], defaults: Mapping[str, Any], prefix: str = "") -> list[list[Any]]:
    """``[key, value, default]`` for every setting of ``config`` that differs from ``defaults`` (dotted keys, in
    the config's order; a section compared key by key, a list as a whole; a key the defaults lack has default
    None): what an edited ``config.yaml`` or a ``--config`` changed, for the summary to say."""
    out = []
    for key, value in config.items():
        name, default = f"{prefix}{key}", defaults.get(key)
        if isinstance(value, Mapping) and isinstance(default, Mapping):
            out += changed_settings(value, default, f"{name}.")
        elif value != default:
            out.append([name, value, default])
    return out


def _inline_refs(schema: Any, base: Path) -> Any:
    """The schema with every file $ref replaced by the file's content (one dict, no resolver needed)."""
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str) and not schema["$ref"].startswith("#"):
            sub = {k: v for k, v in yaml.safe_load((base / schema["$ref"]).read_text()).items() if k != "$schema"}
            return {**_inline_refs(sub, base), **{k: v for k, v in schema.items() if k != "$ref"}}
        return {k: _inline_refs(v, base) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline_refs(v, base) for v in schema]
    return schema


def coerce_config(
    config: Mapping[str, Any], schema: Mapping[str, Any], cli_text: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A copy of ``config`` with every value typed by ``schema`` (see the module docstring).

    ``cli_text`` maps a top-level key to the text its last ``--config KEY=TEXT`` gave (Snakemake keeps
    the raw arguments in ``workflow.config_settings.config_args``). A top-level value that Snakemake
    typed as an int, float or bool is retyped from that text, so ``run=007`` or ``run=1e5`` stays the
    string the user wrote where the schema wants a string (``int("007")`` alone would give ``"7"``).
    """
    config = dict(config)
    for key, text in (cli_text or {}).items():
        value = config.get(key)
        if isinstance(value, (bool, int, float)) and _same(_snakemake_scalar(text), value):
            config[key] = text
    out = coerce(config, schema)
    assert isinstance(out, dict)
    return out


def cli_text(config_args: Any) -> dict[str, str]:
    """``{key: text}`` of raw ``--config`` entries ``["KEY=TEXT", ...]`` (the last entry of a key wins)."""
    out = {}
    for entry in config_args or ():
        if isinstance(entry, str) and "=" in entry:
            key, _, text = entry.partition("=")
            out[key] = text
    return out


def _snakemake_scalar(text: str) -> Any:
    """What ``snakemake.cli.parse_config`` makes of a top-level scalar (int, float, True/False), else _NO."""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, _NO)


def coerce(value: Any, schema: Any) -> Any:
    """``value`` retyped where ``schema`` says so; containers are copied, ``value`` is never modified."""
    if not isinstance(schema, Mapping):  # true / false schemas
        return value
    for sub in schema.get("allOf", ()):
        value = coerce(value, sub)
    branches = [*schema.get("oneOf", ()), *schema.get("anyOf", ())]
    own = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "allOf")}
    value = _coerce_own(value, own)
    if not branches:
        return value
    # The value as typed by each branch; keep the first that the whole schema accepts, preferring one
    # that leaves the value as it is (a string that is already a valid string stays one).
    typed = [coerce(value, branch) for branch in branches]
    valid = [t for t in typed if _is_valid(t, schema)]
    for t in valid:
        if _same(t, value):
            return t
    if valid:
        return valid[0]
    # Nothing fits: keep the branch typing that at least matches its branch's type (the clearer error).
    for t, branch in zip(typed, branches):
        if not _same(t, value) and _type_ok(t, _types(branch)):
            return t
    return value


def _coerce_own(value: Any, schema: Mapping[str, Any]) -> Any:
    types = _types(schema)
    if isinstance(value, str):
        return _coerce_str(value, schema, types)
    if isinstance(value, Mapping):
        return _coerce_object(value, schema)
    if isinstance(value, (list, tuple)):
        return _coerce_array(list(value), schema)
    if types is None or value is None:
        return value
    if _type_ok(value, types):
        if isinstance(value, float) and "integer" in types and "number" not in types and value.is_integer():
            return int(value)  # 1000.0 (from "1e3" on the command line) where an integer is wanted
        return value
    if "string" in types and isinstance(value, (bool, int, float)):
        # Snakemake typed a top-level value the schema wants as a string (run=2024, run=True).
        return str(value)
    return value


def _coerce_str(s: str, schema: Mapping[str, Any], types: list[str] | None) -> Any:
    if (types is None or "null" in types) and s.strip() in NULL_WORDS and _is_valid(None, schema):
        return None
    if (types is None or "string" in types) and _is_valid(s, schema):
        return s
    fallback = _NO
    for t in _TYPE_ORDER:
        if types is not None and t not in types:
            continue
        v = _parse(s, t)
        if v is _NO:
            continue
        if isinstance(v, (dict, list)):
            v = coerce(v, schema)
        if _is_valid(v, schema):
            return v
        if fallback is _NO:
            fallback = v
    # No typed reading is valid: the first that has the right type (an out-of-range 0 reads better in
    # the error than '0'), else the string itself.
    return s if fallback is _NO else fallback


def _parse(s: str, t: str) -> Any:
    text = s.strip()
    if t == "null":
        return None if text in NULL_WORDS else _NO
    if t == "boolean":
        return _BOOLS.get(text, _NO)
    if t in ("integer", "number"):
        try:
            return int(text)
        except ValueError:
            pass
        try:
            f = float(text)
        except ValueError:
            return _NO
        if not math.isfinite(f):
            return _NO  # "nan" passes every bound check; "inf" is no size
        if t == "integer":
            return int(f) if f.is_integer() else _NO
        return f
    if t in ("array", "object"):
        try:
            v = yaml.safe_load(s)
        except yaml.YAMLError:
            return _NO
        return v if isinstance(v, list if t == "array" else dict) else _NO
    return _NO


def _coerce_object(value: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    out = {}
    for key, v in value.items():
        if key in props:
            v = coerce(v, props[key])
        else:
            matched = [sub for pattern, sub in patterns.items() if _search(pattern, str(key))]
            for sub in matched:
                v = coerce(v, sub)
            if not matched and isinstance(extra, Mapping):
                v = coerce(v, extra)
        out[key] = v
    return out


def _coerce_array(value: list[Any], schema: Mapping[str, Any]) -> list[Any]:
    prefix = schema.get("prefixItems", [])
    items = schema.get("items", {})
    if isinstance(items, list):  # draft 4-7 tuple form
        prefix, items = items, schema.get("additionalItems", {})
    return [coerce(v, prefix[i] if i < len(prefix) else items) for i, v in enumerate(value)]


def _search(pattern: str, key: str) -> bool:
    return re.search(pattern, key) is not None


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    t = schema.get("type")
    if t is None:
        return None
    return [t] if isinstance(t, str) else list(t)


def _type_ok(value: Any, types: list[str] | None) -> bool:
    if types is None:
        return True
    checker = jsonschema.Draft202012Validator.TYPE_CHECKER
    return any(checker.is_type(value, t) for t in types)


def _is_valid(value: Any, schema: Mapping[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1 == 1.0 == True, but they are different values)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b
