"""The HTML report in a real browser: headless Chromium opens ``--report``'s file, every embedded image decodes,
nothing is logged to the console, the app renders every category, and a screenshot is saved.

Skipped, saying why, where Chromium is absent; ``.ci/run`` installs it (``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import pytest

from wfutil import CHROMIUM, NO_CHROMIUM, RECORD_ERRORS, snakemake

pytestmark = [pytest.mark.browser, pytest.mark.workflow,
              pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

#: Last in <body>: once the app has rendered, decode every embedded image the way an <img> does and report.
_PROBE = """<script>window.addEventListener('load',function(){setTimeout(async function(){
var out={images:{},errors:null,text:document.body.innerText,categories:Object.keys(categories)};
for (const [path, r] of Object.entries(results)) { if (!(r.mime_type||'').startsWith('image/')) continue;
  out.images[path]=await new Promise(function(ok){var i=new Image();i.onload=function(){ok(i.naturalWidth)};
  i.onerror=function(){ok(0)};i.src=r.data_uri;}); }
out.errors=window.__errors;var p=document.createElement('pre');p.id='__check';p.textContent=JSON.stringify(out);
document.body.appendChild(p);},1500);});</script>"""


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                           *args], capture_output=True, text=True, timeout=300, check=False)


def browser_check(report: Path, work: Path) -> dict:
    """Open an instrumented copy of ``report`` in headless Chromium: image widths by path, errors, the page's text."""
    text = report.read_text(errors="replace").replace("<head>", "<head>" + RECORD_ERRORS, 1)
    end = text.rfind("</body>")
    probe = work / "probe.html"
    probe.write_text(text[:end] + _PROBE + text[end:])
    dom = _chromium("--virtual-time-budget=30000", "--dump-dom", probe.as_uri()).stdout
    found = re.search(r'<pre id="__check">(.*?)</pre>', dom, re.DOTALL)
    assert found, f"the report's page never finished loading in Chromium:\n{dom[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def report(tiny_run, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("report") / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    snakemake(work, "--report", "report.html")
    return work / "report.html"


def test_every_image_loads_and_the_console_stays_clean(report, tmp_path):
    got = browser_check(report, tmp_path)
    figures = sorted(p.relative_to(report.parent).as_posix() for p in (report.parent / "results").rglob("figures/*.png"))
    assert sorted(got["images"]) == figures  # every figure of the run is in the report
    assert [p for p, width in got["images"].items() if width <= 0] == []
    assert got["errors"] == []
    # the app rendered: its sidebar lists every category of results
    assert "Co-location" in got["categories"] and all(c in got["text"] for c in got["categories"]), got["text"][:500]


def test_the_check_sees_a_broken_image(report, tmp_path):
    """A figure whose data is corrupt decodes to width 0: the check can fail."""
    text = report.read_text(errors="replace")
    at = text.index('"data_uri": "data:image/png')
    start = text.index("base64,", at) + len("base64,")
    broken = text[:start] + base64.b64encode(b"not a png at all, not a png at all!").decode() + text[start + 48:]
    assert broken != text
    (tmp_path / "broken.html").write_text(broken)
    got = browser_check(tmp_path / "broken.html", tmp_path)
    assert sum(width <= 0 for width in got["images"].values()) == 1


def test_screenshot(report, tmp_path):
    shot = tmp_path / "report.png"
    _chromium("--window-size=1400,1000", "--virtual-time-budget=10000", f"--screenshot={shot}", report.as_uri())
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1000, 1400) and pixels.std() > 0.01  # drawn, not a blank page
