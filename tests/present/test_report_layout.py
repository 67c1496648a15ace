"""The report's layout: the run report read at 1,200 px without a horizontal
scroll bar and with every image loaded (in headless Chromium where it is
installed, and estimated from the HTML everywhere), and the sweep plots'
edge axes holding the whole of every family-wise band."""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_helpers import backtest_here

from backtest.present.report import page, sweep_plots, write
from backtest.sweep import load_sweep, run_sweep

#: the page's width, and the room the summary's table has in it (body padding off)
PAGE_PX = 1200
TABLE_PX = PAGE_PX - 45
#: the table's font (0.86 of 15 px) and an average character's width in it
FONT_PX = 0.86 * 15
CHAR_PX = 0.56 * FONT_PX
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: reports the page's widths and images, into the page, once it has loaded
CHECK = """<script>
window.addEventListener('load', () => {
  const images = [...document.images];
  const out = {
    page: document.documentElement.scrollWidth, inner: window.innerWidth,
    tables: [...document.querySelectorAll('.scroll')].map(d => [d.scrollWidth, d.clientWidth]),
    images: images.length,
    loaded: images.filter(i => i.complete && i.naturalWidth > 0).length};
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


@pytest.fixture(scope="module")
def run_page(
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    out = tmp_path_factory.mktemp("layout") / "run"
    with pytest.MonkeyPatch.context() as mp:
        code, _, err = backtest_here(
            mp,
            _Capture(),  # type: ignore[arg-type]
            "run",
            "verdict",
            "--sessions",
            "20",
            "--out",
            str(out),
            "-q",
        )
    assert code == 0, err
    return write.write_report(out).html


class _Capture:
    """What `backtest_here` reads of capsys, for a module's fixture (none kept)."""

    def readouterr(self) -> Any:
        class Got:
            out = err = ""

        return Got()


def _cells(text: str, tag: str) -> list[tuple[str, str]]:
    return [
        (attrs, html.unescape(body))
        for attrs, body in re.findall(rf"<{tag}([^>]*)>(.*?)</{tag}>", text, flags=re.S)
    ]


def test_the_run_summary_fits_1200_px_in_its_html(run_page: Path) -> None:
    """Each column as wide as its widest unbreakable text (headers and names wrap
    at spaces, numbers do not), with its padding: together within the page."""
    text = run_page.read_text(encoding="utf-8")
    assert "th {" in page.STYLE and "white-space: normal" in page.STYLE.split("th {", 1)[1]
    table = text.split('<div class="scroll"><table>', 1)[1].split("</table>", 1)[0]
    heads = _cells(table, "th")
    rows = [_cells(row, "td") for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]
    widths = []
    for i, (_, head) in enumerate(heads):
        words = [max(map(len, head.split()), default=0)]
        for row in rows:
            attrs, cell = row[i]
            words.append(max(map(len, cell.split())) if "text" in attrs else len(cell))
        widths.append(max(words) * CHAR_PX + 0.9 * FONT_PX)
    assert sum(widths) <= TABLE_PX, (round(sum(widths)), len(heads))
    # every image is there: a PNG in the page itself
    images = re.findall(r'<img src="data:image/png;base64,([^"]+)"', text)
    assert len(images) == len(re.findall(r"<img ", text)) >= 3
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for data in images)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")
def test_the_run_report_in_headless_chromium_at_1200_px(run_page: Path, tmp_path: Path) -> None:
    checked = tmp_path / "checked.html"
    checked.write_text(
        run_page.read_text(encoding="utf-8").replace("</body>", CHECK + "</body>"),
        encoding="utf-8",
    )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={PAGE_PX},900",
        "--virtual-time-budget=5000",
    ]
    shot = tmp_path / "report.png"
    for args in (
        [f"--user-data-dir={tmp_path / 'profile-shot'}", f"--screenshot={shot}"],
        [f"--user-data-dir={tmp_path / 'profile-dom'}", "--dump-dom"],
    ):
        done = subprocess.run(
            [str(CHROMIUM), *flags, *args, checked.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    found = re.search(r'<pre id="layout">([^<]*)</pre>', done.stdout)
    assert found, done.stdout[-2000:]
    layout = json.loads(html.unescape(found.group(1)))
    assert layout["page"] <= layout["inner"] == PAGE_PX
    assert all(scroll <= client for scroll, client in layout["tables"]), layout
    assert layout["images"] >= 3 and layout["loaded"] == layout["images"]


def test_the_edge_axis_holds_every_family_wise_band(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "bands",
                "seed": 3,
                "sessions": 8,
                "run": {
                    "rules": "commission",
                    "session": {"bankroll": 1000, "max_shoes": 1},
                    "table": {"min": 5, "max": 1000},
                    "seats": [
                        {
                            "strategy": "martingale",
                            "name": "M",
                            "params": {"bet": "banker", "base": 10},
                        }
                    ],
                },
                "grid": {"table.max": [100, 500, 5000]},
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    run_sweep(load_sweep(spec), out, workers=1)
    figures: list[Any] = []
    monkeypatch.setattr(sweep_plots, "png_bytes", lambda fig: figures.append(fig) or b"")
    write.write_report(out)
    (fig,) = [f for f in figures if any(ax.get_title() == "Edge by table.max" for ax in f.axes)]
    ax = next(ax for ax in fig.axes if ax.get_title() == "Edge by table.max")
    low, high = ax.get_ylim()
    ends = []
    for collection in ax.collections:  # the error bars: every band's and interval's ends
        for segment in collection.get_segments():
            ends += [float(y) for _, y in segment]
    assert ends and low < min(ends) and max(ends) < high
    # the legend stands below the panel, not over the bands
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.y1 <= ax.get_window_extent().y0
