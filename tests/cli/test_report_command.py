"""`tessera report RUN -o FILE [--db PATH] [--format html|svg]`: a recorded run rendered as
an SVG (parsed with ElementTree) or a self-contained HTML page (its tables parsed);
refusals exit 1 with what to do and create nothing; usage errors exit 2.

The end-to-end cases record runs with `tessera rechunk` into a history database of
their own (TESSERA_HISTORY=<tmp>/history.sqlite); ctest runs everything else with
TESSERA_HISTORY=off.
"""
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
import zarr
from zarr_v2 import V2_DEFAULT_COMPRESSOR

SVG = "{http://www.w3.org/2000/svg}"


def run(tessera_bin, *args, history=None):
    env = dict(os.environ)
    env.pop("TESSERA_HISTORY", None)
    if history is not None:
        env["TESSERA_HISTORY"] = str(history)
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=60, env=env)


class Tables(HTMLParser):
    """The page's tables by class: {class: [[cell text, ...] per row]}; and any
    external reference (src/href attributes, <script>)."""

    def __init__(self):
        super().__init__()
        self.tables, self.external = {}, []
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" or "src" in attrs or "href" in attrs:
            self.external.append((tag, attrs))
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("class"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def parse_html(path):
    parser = Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def by_class(root, tag, css_class):
    return [e for e in root.iter(SVG + tag) if css_class in e.get("class", "").split()]


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir())


# ---- refusals that need no recorded run -------------------------------------------


def test_history_off_is_a_clear_error(tessera_bin, tmp_path):
    out = tmp_path / "r.html"
    result = run(tessera_bin, "report", "last", "-o", out, history="off")
    assert result.returncode == 1
    assert "history is off" in result.stderr
    assert "TESSERA_HISTORY" in result.stderr and "--db" in result.stderr
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("via", ["env", "--db"])
def test_missing_database_is_reported_and_not_created(tessera_bin, tmp_path, via):
    database = tmp_path / "nowhere" / "history.sqlite"
    out = tmp_path / "r.svg"
    args = ["report", "last", "-o", out]
    if via == "--db":
        result = run(tessera_bin, *args, "--db", database, history="off")
    else:
        result = run(tessera_bin, *args, history=database)
    assert result.returncode == 1
    assert f"no history yet at {database}: run a computation first" in result.stderr
    assert leftovers(tmp_path) == []  # neither the database, its folder nor the report


@pytest.mark.parametrize("args,message", [
    (["last", "-o", "r.txt"], ".svg"),
    (["last", "-o", "report"], ".html"),
    (["last", "-o", "r.svg", "--format", "pdf"], "pdf"),
    (["seven", "-o", "r.svg"], "seven"),
    (["0", "-o", "r.svg"], "run id"),
    (["last"], "--output"),
])
def test_usage_errors(tessera_bin, tmp_path, args, message):
    database = tmp_path / "history.sqlite"
    result = run(tessera_bin, "report", *args, "--db", database)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Usage:" in result.stderr
    assert leftovers(tmp_path) == []


def test_help(tessera_bin):
    result = run(tessera_bin, "report", "--help")
    assert result.returncode == 0
    for word in ("RUN", "--output", "--db", "--format", "html", "svg"):
        assert word in result.stdout


# ---- end to end: runs recorded by `tessera rechunk` ---------------------------------
# These need the executor to record runs into the history database.


@pytest.fixture
def recorded(tessera_bin, tmp_path):
    """A history database holding two runs of `tessera rechunk` with 2 workers."""
    source = tmp_path / "in.zarr"
    values = np.arange(203 * 151, dtype="<f8").reshape(203, 151)
    zarr.open_array(str(source), mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=values.shape, chunks=(203, 4),
                    dtype=values.dtype)[...] = values
    history = tmp_path / "history.sqlite"
    for attempt in range(2):
        out = tmp_path / f"out{attempt}.zarr"
        result = run(tessera_bin, "rechunk", source, out, "--chunks", "5,-1",
                     "--allowed-mem", "100kB", "--workers", 2, "--quiet", history=history)
        assert result.returncode == 0, result.stderr
    assert history.exists()
    return history


def test_html_report_of_the_last_run(tessera_bin, tmp_path, recorded):
    out = tmp_path / "r.html"
    result = run(tessera_bin, "report", "last", "-o", out, history=recorded)
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1
    page = parse_html(out)
    assert page.external == []  # readable offline: no scripts, no links, no images
    summary = {row[0]: row[1] for row in page.tables["run"] if len(row) == 2}
    assert "rechunk" in summary["label"]
    assert summary["workers"] == "2"
    assert summary["allowed_mem"].startswith("100.0 kB")
    assert summary["status"] == "ok"
    for field in ("started_at", "executor", "reserved_mem", "total_mem", "seconds",
                  "peak RSS"):
        assert field in summary
    ops = page.tables["ops"]
    header, rows = ops[0], ops[1:]
    assert header[:4] == ["op", "kind", "tasks", "projected"]
    assert rows and all(len(row) == len(header) for row in rows)
    assert sum(int(row[2]) for row in rows) > 0
    assert "<svg" in out.read_text(encoding="utf-8")


def test_svg_report_draws_ops_lanes_and_allowed_mem(tessera_bin, tmp_path, recorded):
    page = tmp_path / "r.html"
    assert run(tessera_bin, "report", "last", "-o", page, history=recorded).returncode == 0
    op_names = [row[0] for row in parse_html(page).tables["ops"][1:]]

    out = tmp_path / "r.svg"
    result = run(tessera_bin, "report", "latest", "-o", out, "--db", recorded, history="off")
    assert result.returncode == 0, result.stderr
    root = ET.parse(out).getroot()  # well-formed XML
    assert root.tag == SVG + "svg"
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert width > 0 and height > 0
    texts = "\n".join("".join(e.itertext()) for e in root.iter(SVG + "text"))
    for name in op_names:
        assert name[:20] in texts
    lanes = by_class(root, "rect", "lane")
    assert sorted(lane.get("data-worker") for lane in lanes) == ["0", "1"]
    tasks = by_class(root, "rect", "task")
    assert tasks and all(t.find(SVG + "title") is not None for t in tasks)
    assert {t.get("data-worker") for t in tasks} <= {"0", "1"}
    allowed = by_class(root, "line", "allowed-mem")
    assert len(allowed) == 1
    assert float(allowed[0].get("x1")) == float(allowed[0].get("x2"))
    for bar in by_class(root, "rect", "bar"):  # every bar within the drawing
        assert 0 <= float(bar.get("x")) and float(bar.get("x")) + float(bar.get("width")) <= width


def test_format_option_overrides_the_extension(tessera_bin, tmp_path, recorded):
    out = tmp_path / "report.out"
    result = run(tessera_bin, "report", "last", "-o", out, "--format", "svg", history=recorded)
    assert result.returncode == 0, result.stderr
    assert ET.parse(out).getroot().tag == SVG + "svg"


def test_run_by_id_and_unknown_id(tessera_bin, tmp_path, recorded):
    last = tmp_path / "last.html"
    assert run(tessera_bin, "report", "last", "-o", last, history=recorded).returncode == 0
    last_id = re.search(r"<h1>Tessera run (\d+):", last.read_text(encoding="utf-8")).group(1)
    by_id = tmp_path / "by_id.html"
    result = run(tessera_bin, "report", last_id, "-o", by_id, history=recorded)
    assert result.returncode == 0, result.stderr
    assert by_id.read_text(encoding="utf-8") == last.read_text(encoding="utf-8")
    earlier = tmp_path / "earlier.html"
    result = run(tessera_bin, "report", int(last_id) - 1, "-o", earlier, history=recorded)
    assert result.returncode == 0, result.stderr  # both rechunk runs were recorded

    out = tmp_path / "r.html"
    result = run(tessera_bin, "report", "999999", "-o", out, history=recorded)
    assert result.returncode == 1
    assert "no run 999999" in result.stderr and '"last"' in result.stderr
    assert re.search(rf"latest runs are {last_id}\b", result.stderr), result.stderr
    assert not out.exists()


def test_unwritable_output_leaves_nothing(tessera_bin, tmp_path, recorded):
    out = tmp_path / "missing-folder" / "r.svg"
    result = run(tessera_bin, "report", "last", "-o", out, history=recorded)
    assert result.returncode == 1
    assert f"cannot write the report to {out}" in result.stderr
    assert not out.parent.exists()
    taken = tmp_path / "taken.svg"
    taken.mkdir()
    result = run(tessera_bin, "report", "last", "-o", taken, history=recorded)
    assert result.returncode == 1
    assert "cannot write the report" in result.stderr
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []
