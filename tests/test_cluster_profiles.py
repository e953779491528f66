"""The cluster profiles and the container recipe, as far as this machine can check them (no Kubernetes here).

* every key of profiles/slurm and profiles/kubernetes is an option of Snakemake or of its executor plug-in:
  Snakemake's own parser reads each profile (a misspelt key is refused, shown below);
* the Containerfile installs the project as the README's Quick start does, and what it copies holds what the
  install reads (the build itself needs PyPI, which the tests do not reach);
* the Kubernetes profile names the image the Containerfile's own comment says to build.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml
from setuptools import find_packages
from snakemake.cli import parse_args

from wfutil import REPO

pytestmark = pytest.mark.slow  # Snakemake's parser loads every executor plug-in (and asks Slurm for its config)

CONTAINERFILE = (REPO / "Containerfile").read_text()


def parsed(profile: Path):
    return parse_args(["-s", str(REPO / "Snakefile"), "--workflow-profile", str(profile), "-n"])[1]


@pytest.mark.parametrize("name, executor", [("slurm", "slurm"), ("kubernetes", "kubernetes")])
def test_every_profile_key_is_an_option_of_snakemake_or_its_plugin(name, executor):
    args = parsed(REPO / "profiles" / name)  # an unknown key would have been refused (next test)
    assert args.executor == executor
    if name == "slurm":
        assert (args.slurm_status_command, args.slurm_init_seconds_before_status_checks) == ("squeue", 5)


def test_a_misspelt_profile_key_is_refused(tmp_path, capsys):
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({**profile, "slurm-status-comand": "squeue"}))
    with pytest.raises(SystemExit):
        parsed(tmp_path)
    assert "unrecognized arguments: --slurm-status-comand" in capsys.readouterr().err


def test_the_slurm_profile_sets_one_of_the_two_retry_settings():
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    assert "retries" in profile and "restart-times" not in profile  # the same setting under two names


def readme_install() -> str:
    """The Quick start's install: `python3 -m venv .venv && .venv/bin/pip install -e .`."""
    quick = re.search(r"^(python3 -m venv \.venv && \.venv/bin/pip install -e \.) && ", (REPO / "README.md").read_text(), re.M)
    return quick.group(1)


def test_the_containerfile_installs_the_project_as_the_readme_does():
    (run,) = re.findall(r"^RUN (.*)$", CONTAINERFILE, re.M)
    assert run == readme_install().replace("pip install -e .", "pip install --no-cache-dir -e '.[kubernetes]'")
    assert re.search(r"^ENV .*PATH=/colocate/\.venv/bin:\$PATH", CONTAINERFILE, re.M)  # snakemake found in the pods
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("snakemake-storage-plugin-s3") for d in extras["kubernetes"])


def test_what_the_containerfile_copies_is_what_the_install_reads(tmp_path):
    """Its COPY lines, into an empty directory: pyproject.toml, the readme it names, and every package that
    pyproject.toml's package search finds in the repository (the build itself needs PyPI, which the tests do not
    reach)."""
    context = tmp_path / "context"
    for sources, _ in re.findall(r"^COPY (.+) (\S+)$", CONTAINERFILE, re.M):
        for source in sources.split():
            if (REPO / source).is_dir():
                shutil.copytree(REPO / source, context / source, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
            else:
                context.mkdir(parents=True, exist_ok=True)
                shutil.copy(REPO / source, context / source)
    project = tomllib.loads((context / "pyproject.toml").read_text())
    assert (context / project["project"]["readme"]).is_file()
    find = project["tool"]["setuptools"]["packages"]["find"]
    for where in find["where"]:
        found = {root: sorted(find_packages(where=str(root / where), include=find["include"])) for root in (REPO, context)}
        assert found[context] == found[REPO] and "colocate" in found[REPO]
    data = {p.relative_to(REPO).as_posix() for p in (REPO / "workflow/colocate").rglob("*") if p.is_file()
            and "__pycache__" not in p.parts}
    assert data <= {p.relative_to(context).as_posix() for p in context.rglob("*") if p.is_file()}


def test_the_kubernetes_profile_names_the_image_the_containerfile_builds():
    profile = yaml.safe_load((REPO / "profiles/kubernetes/config.yaml").read_text())
    (tag,) = set(re.findall(r"-t (\S+) \.", CONTAINERFILE))
    assert profile["container-image"] == tag
