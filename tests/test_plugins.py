"""Plug-ins (``module:Class`` in config): the registry's protocol check, the importable common checks, the docs'
worked example (examples/plugins, docs/extending.md) run verbatim, start-up errors naming the key, and reruns when a plug-in changes."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
import yaml
from colocate.registry import ConfigError, Registry, protocol_problems
from colocate.scheduling import fit_tests as ft
from colocate.scheduling import packing_grid as pg
from colocate.scheduling import placement as P
from colocate.scheduling import placement_workload as pw
from colocate.scheduling.checks import check_fit_test, check_placement_policy
from wfutil import (
    REPO,
    assert_config_rejected,
    doc_files,
    doc_text,
    page_activation,
    planned_rules,
    shell,
    snakemake,
    venv_checkout,
)

EXAMPLE = REPO / "examples" / "plugins"
#: README.md and the docs' pages, where the worked example is shown (docs/extending.md, "Plug-ins")
DOCS = doc_text()

GOOD_POLICY = '''
from dataclasses import dataclass
from typing import ClassVar
import numpy as np

@dataclass
class LeastLoaded:
    """The node with the lowest mean utilisation after placement (a kube-scheduler LeastAllocated score)."""
    kind: ClassVar[str] = "least_loaded"
    name: str = "LEAST"
    def reset(self, state): pass
    def observe(self, demand): pass
    def objective(self, state, demand, nodes):
        return state.candidate_util(demand, nodes).mean(axis=1)

class NoObjective:
    kind = "broken"
    name = "BROKEN"
    def reset(self, state): pass
    def observe(self, demand): pass

class WrongSignature(NoObjective):
    def objective(self, state): return np.zeros(1)
'''


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """A module ``my_policies`` on sys.path with a good policy and two misfits."""
    (tmp_path / "my_policies.py").write_text(GOOD_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield
    for name in ("my_policies", "hoeffding"):
        sys.modules.pop(name, None)


# ----------------------------------------------------------------------------- the registry


def test_protocol_check_names_what_is_missing_and_incompatible(plugin_module):
    import my_policies

    assert protocol_problems(my_policies.LeastLoaded, P.PlacementPolicy) == []
    assert protocol_problems(my_policies.NoObjective, P.PlacementPolicy) == ["no method objective()"]
    (problem,) = protocol_problems(my_policies.WrongSignature, P.PlacementPolicy)
    assert "objective() does not accept the protocol's arguments (state, demand, nodes)" in problem


@pytest.mark.parametrize(
    "spec, match",
    [
        ("nosuchmodule:Fit", r"packing.estimators.nosuchmodule:Fit: cannot import module 'nosuchmodule'"),
        ("hoeffding:Nope", r"packing.estimators.hoeffding:Nope: module 'hoeffding' has no class 'Nope'"),
        ("my_policies:LeastLoaded", r"is not a fit test: no attribute 'estimator'"),
        ("GPAX", r"unknown fit test 'GPAX'; known: GPA, Cantelli"),
        ("hoeffding.Hoeffding", r"unknown fit test"),
    ],
)
def test_bad_plugin_is_named_with_its_key(plugin_module, spec, match):
    with pytest.raises(ConfigError, match=match):
        pg.estimator_settings({spec: [0.1]})


def test_plugin_options_reach_the_constructor_and_bad_ones_are_named(plugin_module):
    params, own = pg.estimator_settings({"hoeffding:Hoeffding": {"parameters": [0.05], "options": {"range_percentile": 99}}})
    assert params == {"hoeffding:Hoeffding": [0.05]} and own == {"hoeffding:Hoeffding": {"range_percentile": 99}}
    fit = pg.fit_test("hoeffding:Hoeffding", 0.05, own["hoeffding:Hoeffding"], beta_threshold=0.8)
    assert (fit.eps, fit.range_percentile) == (0.05, 99)
    with pytest.raises(ConfigError, match=r"packing.estimators.hoeffding:Hoeffding: .*cannot be built with \['window'\]"):
        pg.estimator_settings({"hoeffding:Hoeffding": {"parameters": [0.05], "options": {"window": 3}}})
    with pytest.raises(ConfigError, match=r"hoeffding:Hoeffding: parameter 2: Hoeffding eps must be in \(0, 1\)"):
        pg.estimator_settings({"hoeffding:Hoeffding": [2]})


def test_registration_refuses_a_misfit_and_a_duplicate():
    reg = Registry("fit test", ft.FitTest, key="estimator")
    reg.register(ft.GPA)
    with pytest.raises(TypeError, match="registered twice"):
        reg.register(ft.GPA)

    class Half:
        estimator = "half"

        def columns(self, stats):
            return np.zeros((len(stats), 1))

    with pytest.raises(TypeError, match=r"Half is not a fit test: no attribute 'parameter'.*no method slack\(\)"):
        reg.register(Half)


def test_every_registry_builds_its_members_by_name():
    from colocate.analysis import failures
    from colocate.scheduling import packing, periodic_packing

    for registry in (ft.FIT_TESTS, packing.ALGORITHMS, periodic_packing.CONSTRAINTS, P.POLICIES, P.OPTIMISERS,
                     failures.DISPERSION_TESTS):
        assert len(registry) >= 2 and registry.names() == tuple(registry)
        for cls in registry.classes():
            assert protocol_problems(cls, registry.protocol) == [], cls
            assert registry[getattr(cls, registry.key)] is cls


# ----------------------------------------------------------------------------- the common checks


def test_the_common_checks_pass_the_example_and_catch_misfits(plugin_module):
    from hoeffding import Hoeffding

    check_fit_test(Hoeffding(0.05))
    check_fit_test(Hoeffding(0.01, range_percentile=95))

    class PerColumn(Hoeffding):
        """A slack per bin and column (m × K), where the protocol wants one per bin."""

        def slack(self, sums, capacity):
            return capacity - sums

    with pytest.raises(AssertionError, match=r"slack\(\) of n bins must have n values"):
        check_fit_test(PerColumn(0.05))

    class Drifting(Hoeffding):
        calls = 0

        def columns(self, stats):
            Drifting.calls += 1
            return super().columns(stats) * (1 + Drifting.calls)

    with pytest.raises(AssertionError, match="columns\\(\\) is not deterministic"):
        check_fit_test(Drifting(0.05))


def test_the_policy_checks_pass_a_plugin_and_catch_misfits(plugin_module):
    import my_policies

    check_placement_policy(lambda: my_policies.LeastLoaded())
    with pytest.raises(AssertionError, match="is not a PlacementPolicy: no method objective"):
        check_placement_policy(lambda: my_policies.NoObjective())

    class Mutating(my_policies.LeastLoaded):
        def objective(self, state, demand, nodes):
            state.alloc[0] += 1
            return super().objective(state, demand, nodes)

    with pytest.raises(AssertionError, match="changed the cluster state"):
        check_placement_policy(lambda: Mutating())


def test_a_plugin_policy_runs_in_the_placement_experiment(plugin_module):
    specs = pw.policy_specs(["pack", {"my_policies:LeastLoaded": {"name": "LL"}}], ["cpu", "memory"], "cpu", [1, -1], "placement.trace")
    assert [s["kind"] for s in specs] == ["pack", "my_policies:LeastLoaded"]
    policy = P.make_policy(specs[1]["kind"], prime_resource=0, own=specs[1]["own"])
    assert policy.name == "LL"
    with pytest.raises(ConfigError, match=r"placement.trace.policies: my_policies:WrongSignature is not a placement policy"):
        pw.policy_specs(["my_policies:WrongSignature"], ["cpu", "memory"], "cpu", [1, -1], "placement.trace")


# ----------------------------------------------------------------------------- the docs' worked example


def _readme_line(start: str) -> str:
    (line,) = [ln for ln in DOCS.splitlines() if ln.startswith(start)]
    return line


def _run(line: str, cwd) -> subprocess.CompletedProcess:
    """A documented command line, verbatim, from a checkout-like ``cwd``, in a shell without the venv on PATH but
    for the activation its page states or inherits (wfutil.page_activation; the checkout's ``.venv`` is this
    interpreter's environment)."""
    ((page, offset),) = [(p, p.read_text().index(line)) for p in doc_files() if line in p.read_text()]
    venv_checkout(cwd)
    activation = page_activation(page, offset)
    return shell(f"{activation}\n{line}" if activation else line, cwd)


def test_readme_check_command_runs_verbatim(tmp_path):
    (tmp_path / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    res = _run(_readme_line("PYTHONPATH=examples/plugins python -c"), tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]


def test_readme_example_config_is_the_one_shown():
    shown = re.search(r"```yaml\n(run: plugin-example\n.*?)```", DOCS, re.S).group(1)
    assert yaml.safe_load(shown) == yaml.safe_load((EXAMPLE / "config.yaml").read_text())


@pytest.mark.workflow
def test_readme_plugin_run_packs_with_hoeffding_and_reruns_when_it_changes(tmp_path):
    """The documented run at the tiny scale: Hoeffding beside GPA and Cantelli; a smaller ε is stricter."""
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    (tmp_path / "examples/plugins").mkdir(parents=True)
    for name in ("hoeffding.py", "config.yaml"):
        shutil.copy(EXAMPLE / name, tmp_path / "examples/plugins" / name)
    line = _readme_line("PYTHONPATH=examples/plugins snakemake")
    args = shlex.split(line)[2:]
    args = [*args[: args.index("--")], "--config", "scale=tiny", *args[args.index("--") :]]
    env = {"PYTHONPATH": "examples/plugins"}
    res = snakemake(tmp_path, *args, env=env)
    summary = pl.read_csv(tmp_path / "results/plugin-example/tables/packing_summary.csv")
    assert set(summary["estimator"]) == {"GPA", "Cantelli", "hoeffding:Hoeffding"}, res.stdout[-2000:]
    hoeffding = summary.filter(pl.col("estimator") == "hoeffding:Hoeffding")
    assert set(hoeffding["label"]) == {"Hoeffding 0.05", "Hoeffding 0.01"}
    for (algorithm,), g in hoeffding.group_by("algorithm"):
        m = dict(zip(g["parameter"], g["m_abs_mean"]))
        assert m[0.01] >= m[0.05] > 0, (algorithm, m)
    # the figures drawn from the run's table show it, the plug-in's cells among them; §5.2 alone fills Figs 7-9
    # and the Pareto figure (no avg data, capacity, clairvoyance or rebalancing cells for Figs 10-13)
    from colocate.figures import packing as figs
    from test_packing import assert_packing_figures_show

    table = pl.read_parquet(tmp_path / "results/plugin-example/tables/packing.parquet")
    assert assert_packing_figures_show(table) == 4
    fig = figs.fig_pareto(table)
    shown = {label for t in fig.axes[0].texts for label in t.get_text().split(" = ")}  # coincident points share one
    assert {"Hoeffding 0.05", "Hoeffding 0.01"} <= shown
    # editing the plug-in reruns the packing jobs, and only through them
    plugin = tmp_path / "examples/plugins/hoeffding.py"
    plugin.write_text(plugin.read_text().replace("sums[:, 1] / 2", "sums[:, 1] / 2.0"))
    assert planned_rules(tmp_path, *args, env=env) == {"packing_setting", "packing_table", "packing_figures"}


@pytest.mark.slow  # two Snakemake dry runs
def test_a_bad_plugin_stops_the_run_at_start_up_naming_its_key(tmp_path):
    assert_config_rejected(tmp_path, "packing.estimators.nosuchmodule:Fit: cannot import module 'nosuchmodule'",
                           packing={"estimators": {"GPA": [0.1], "nosuchmodule:Fit": [0.1]}, "sections": {"5.2": {}}})
    assert_config_rejected(tmp_path, "placement.policies: unknown placement policy 'least_loaded'; known: pack, spread",
                           placement={"policies": ["pack", "least_loaded"]})
