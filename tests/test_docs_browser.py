"""The documentation site in a real browser: ``mkdocs build --strict`` builds it once, a loopback HTTP server serves
it, and headless Chromium opens every page of docs/: the page renders (its article holds the page's H1 and more),
every <img> decodes, nothing is logged as an error and no resource fails to load, and every link to the site itself
leads to a page served with HTTP 200 (and, with a #fragment, to an element of that id there). Links to other hosts
are listed, not fetched: Chromium resolves no host but 127.0.0.1, so the site must work offline.

Skipped, saying why, where Chromium is absent; ``.ci/run`` installs it (``apt-get install chromium``).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

from wfutil import CHROMIUM, NO_CHROMIUM, RECORD_ERRORS, REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

#: Last in <body>: once the page has loaded (and every <img> settled), report its H1, article text, images, links, ids.
_PROBE = """<script>window.addEventListener('load',function(){setTimeout(async function(){
var art=document.querySelector('article.md-content__inner')||document.querySelector('article');
var h1=art&&art.querySelector('h1');if(h1){h1=h1.cloneNode(true);h1.querySelectorAll('.headerlink').forEach(function(a){a.remove();});}
var imgs=Array.from(document.images);
await Promise.all(imgs.map(function(i){i.loading='eager';return i.complete?null:new Promise(function(ok){
  i.addEventListener('load',ok);i.addEventListener('error',ok);});}));
var out={h1:h1?h1.textContent.trim():null,text:art?art.innerText:'',
images:imgs.map(function(i){return [i.getAttribute('src'),i.naturalWidth];}),
links:Array.from(document.querySelectorAll('a[href]')).map(function(a){return a.href;}),
ids:Array.from(document.querySelectorAll('[id],a[name]')).map(function(e){return e.id||e.getAttribute('name');}),
errors:window.__errors};
var p=document.createElement('pre');p.id='__check';p.textContent=JSON.stringify(out);document.body.appendChild(p);},500);});</script>"""

#: The report test's flags, and none of Chromium's own traffic; no host resolves but the loopback server's.
_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
          "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
          "--disable-quic", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,1000",
          "--enable-logging=stderr", "--v=0"]


def _instrument(text: str) -> str:
    text = text.replace("<head>", "<head>" + RECORD_ERRORS, 1)
    end = text.rfind("</body>")
    return text[:end] + _PROBE + text[end:]


class _Handler(SimpleHTTPRequestHandler):
    """Serves the site, every HTML page with the recorder and the probe; records each request's path and status."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir() and urlsplit(self.path).path.endswith("/"):
            path = path / "index.html"
        if path.suffix != ".html" or not path.is_file():
            return super().do_GET()  # a directory without its slash is redirected; a missing file is a 404
        body = _instrument(path.read_text()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None

    def log_request(self, code="-", size="-"):
        self.server.requests.append((urlsplit(self.path).path, int(code)))

    def log_message(self, format, *args):
        pass


class SiteServer:
    """``root`` over http://127.0.0.1:<free port>/, from a thread, until :meth:`close`."""

    def __init__(self, root: Path):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
        self.httpd.daemon_threads = True
        self.httpd.requests = []
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[tuple[str, int]]:
        return self.httpd.requests

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.ids.update(v for v in (attrs.get("id"), attrs.get("name") if tag == "a" else None) if v)


@dataclass
class Check:
    """What the browser check found. Each problem names the page (its URL path) it was found on."""

    pages: dict[str, dict] = field(default_factory=dict)  # path -> the probe's answer (h1, text, images, links, ids)
    render: list[tuple[str, str]] = field(default_factory=list)  # (page, what is wrong)
    images: list[tuple[str, str]] = field(default_factory=list)  # (page, src) of an <img> with naturalWidth 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (page, console error / failed load / rejection)
    console: list[tuple[str, str]] = field(default_factory=list)  # (page, a console message Chromium logged)
    failed: list[tuple[str, str, int]] = field(default_factory=list)  # (page, requested path, HTTP status >= 400)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (page, href, why it is broken)
    external: dict[str, list[str]] = field(default_factory=dict)  # href to another host -> pages linking it
    internal: set[str] = field(default_factory=set)  # distinct links to the site checked (with their #fragment)
    seconds: float = 0.0  # the Chromium launches

    def problems(self) -> dict[str, list]:
        return {k: v for k, v in [("render", self.render), ("images", self.images), ("errors", self.errors),
                                  ("console", self.console), ("failed", self.failed), ("links", self.links)] if v}


def open_page(url: str) -> tuple[dict | None, list[str], str]:
    """Open ``url`` in a fresh headless Chromium: the probe's answer (None if it never ran), the console messages
    Chromium logged, and the DOM's tail (for a message)."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        res = subprocess.run([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                              "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False)
    console = re.findall(r":CONSOLE[^\]]*\] (.*)", res.stderr)
    found = re.search(r'<pre id="__check">(.*?)</pre>', res.stdout, re.DOTALL)
    return (json.loads(html.unescape(found.group(1))) if found else None), console, res.stdout[-2000:]


def check_site(server: SiteServer, pages: dict[str, str | None]) -> Check:
    """Open each page (URL path -> its expected H1, None for any) served by ``server`` in Chromium, then follow
    every link to the server: the target must answer 200 and hold the #fragment's id (an opened page's rendered
    ids, another page's ids as served)."""
    got = Check()
    start = time.monotonic()
    for path, h1 in pages.items():
        before = len(server.requests)
        probe, console, dom = open_page(server.base + path.lstrip("/"))
        got.failed += [(path, p, s) for p, s in server.requests[before:] if s >= 400]
        got.console += [(path, m) for m in console]
        if probe is None:
            got.render.append((path, f"the page never finished loading in Chromium: {dom[-300:]!r}"))
            continue
        got.pages[path] = probe
        if h1 is not None and probe["h1"] != h1:
            got.render.append((path, f"H1 {probe['h1']!r}, not {h1!r}"))
        text = probe["text"].strip()
        if not text or (probe["h1"] or "") not in text or len(text) <= len(probe["h1"] or ""):
            got.render.append((path, f"the article does not render its H1 and text: {text[:200]!r}"))
        got.images += [(path, src) for src, width in probe["images"] if width <= 0]
        got.errors += [(path, e) for e in probe["errors"]]
    got.seconds = time.monotonic() - start

    status: dict[str, tuple[int, str, set[str] | None]] = {}  # URL without fragment -> status, final path, ids

    def target(url: str) -> tuple[int, str, set[str] | None]:
        if url not in status:
            try:
                with urllib.request.urlopen(url, timeout=30) as res:
                    final = urlsplit(res.geturl()).path
                    body = res.read().decode(errors="replace")
                    ids = None
                    if final not in got.pages and "html" in res.headers.get("Content-Type", ""):
                        parser = _Ids()
                        parser.feed(body)
                        ids = parser.ids
                    status[url] = (res.status, final, ids)
            except urllib.error.HTTPError as e:
                status[url] = (e.code, urlsplit(url).path, None)
        return status[url]

    server_host = urlsplit(server.base).netloc
    for path, probe in got.pages.items():
        for href in dict.fromkeys(probe["links"]):
            parts = urlsplit(href)
            if parts.scheme not in ("http", "https") or parts.netloc != server_host:
                got.external.setdefault(href, []).append(path)
                continue
            got.internal.add(href)
            url, fragment = urldefrag(href)
            code, final, ids = target(url)
            if code != 200:
                got.links.append((path, href, f"HTTP {code}"))
            elif fragment:
                ids = got.pages[final]["ids"] if final in got.pages else ids
                if unquote(fragment) not in (ids or ()):
                    got.links.append((path, href, f"no element with id {unquote(fragment)!r} on {final}"))
    return got


def _url_path(page: str) -> str:
    """docs/<page>.md -> the URL path mkdocs builds it at (directory URLs)."""
    stem = page.removesuffix(".md")
    return "/" if stem == "index" else "/" + stem.removesuffix("/index") + "/"


def _h1(md: Path) -> str:
    return re.search(r"^# (.+)$", md.read_text(), re.MULTILINE).group(1).replace("`", "").strip()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                          "-d", str(out)], check=False, capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
    return out


@pytest.fixture(scope="module")
def server(site):
    served = SiteServer(site)
    yield served
    served.close()


def test_every_page_renders_with_its_images_and_links(site, server):
    pages = {_url_path(p.relative_to(REPO / "docs").as_posix()): _h1(p) for p in sorted((REPO / "docs").rglob("*.md"))}
    built = {"/" + p.relative_to(site).as_posix().removesuffix("index.html") for p in site.rglob("*.html")}
    assert built - {"/404.html"} == set(pages)  # every page built is a page of docs/, and each is checked
    got = check_site(server, pages)
    assert got.problems() == {}
    assert sorted(got.pages) == sorted(pages)
    assert ("/search/search_index.json", 200) in server.requests  # the search loads its index, offline
    images = sum(len(p["images"]) for p in got.pages.values())
    print(f"\n{len(got.pages)} pages in {got.seconds:.1f} s ({images} images); {len(got.internal)} links to the site "
          f"checked; {len(got.external)} links to other hosts, not fetched:")
    for href, on in sorted(got.external.items()):
        print(f"  {href} (on {', '.join(on)})")


def test_the_check_reports_a_broken_image_and_broken_links(site, tmp_path):
    """A copy of the site whose Methods page gains an image that is not there, a link to a page that is not there
    and a link to a heading that is not there: the check reports exactly those (and the image's failed load)."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page = copy / "methods/index.html"
    text = page.read_text()
    at = text.index("</h1>") + len("</h1>")
    page.write_text(text[:at] + '<p><img src="missing.png" alt="missing"> <a href="../nowhere/">nowhere</a> '
                    '<a href="../outputs/#no-such-heading">no such heading</a></p>' + text[at:])
    served = SiteServer(copy)
    try:
        got = check_site(served, {"/methods/": "Methods"})
    finally:
        served.close()
    base = served.base
    assert got.problems() == {
        "images": [("/methods/", "missing.png")],
        "errors": [("/methods/", f"error: {base}methods/missing.png")],
        "failed": [("/methods/", "/methods/missing.png", 404)],
        "links": [("/methods/", f"{base}nowhere/", "HTTP 404"),
                  ("/methods/", f"{base}outputs/#no-such-heading", "no element with id 'no-such-heading' on /outputs/")],
    }
    assert len(got.internal) > 5  # the page's other links, to pages not opened here, were followed and found
