"""`report.SECTIONS`: the one list of a run summary's sections that both the
terminal report and the HTML report render. Each summary block belongs to one
section; a block no section names lands in "Other" in both; a section added to
the list shows in both."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import incast
from conftest import INCAST_SCENARIO, TINY_TOML
from incast import report
from incast.html import summary_html
from incast.report import SECTIONS, SectionKind, print_summary, summary_sections
from test_api import CM_TOML
from test_nic import _SLED


def _terminal(results) -> str:
    out = io.StringIO()
    print_summary(results, Console(file=out, width=200))
    return out.getvalue()


def test_each_summary_block_belongs_to_one_section():
    named = [key for kind in SECTIONS for key in kind.keys]
    assert len(named) == len(set(named))
    assert not set(named) & report._SHOWN_ELSEWHERE
    assert [kind.name for kind in SECTIONS][-1] == "other"


#: The tiny scenario through the NIC's transmit queues (the `nic_queues` block).
_NIC_QUEUES = TINY_TOML + '[nic]\nmodel = "queues"\n[nic.queues]\nsplit = "shared"\n'


@pytest.fixture(scope="module")
def runs():
    scenarios = (TINY_TOML, CM_TOML, _SLED, _NIC_QUEUES, INCAST_SCENARIO)
    return [incast.run(scenario) for scenario in scenarios]


def test_the_core_reports_no_block_without_a_section(runs):
    """Every top-level key these runs' summaries have (congestion management, NIC
    and PCIe among them) has its section: none is left to "Other"."""
    shown = report._SHOWN_ELSEWHERE.union(*(kind.keys for kind in SECTIONS))
    keys = {key for results in runs for key in results.summary}
    assert {"cm", "nic_queues", "nic_receive", "pcie", "pfc"} <= keys
    assert keys <= shown
    for results in runs:
        titles = [section.title for section in summary_sections(results.summary)[0]]
        assert "Other" not in titles


def test_a_block_without_a_section_is_other_in_both_reports(runs):
    results = runs[0]
    results.summary["mystery"] = {"wait_us": 12.5}
    try:
        parts, _ = summary_html(results.summary)
        assert any("Other" in part and "mystery.wait_us" in part for part in parts)
        text = _terminal(results)
        assert "Other" in text and "mystery.wait_us" in text and "12.50 us" in text
    finally:
        del results.summary["mystery"]


def test_a_section_added_to_the_list_shows_in_both_reports(runs, monkeypatch):
    results = runs[0]
    extra = SectionKind("probe", ("engine",), report._rows("Probe", lambda s: [("events", "7")]))
    monkeypatch.setattr(report, "SECTIONS", (*SECTIONS[:-1], extra, SECTIONS[-1]))
    parts, _ = summary_html(results.summary)
    assert any('id="table-probe">Probe</h2>' in part for part in parts)
    assert "Probe" in _terminal(results)


def test_both_headers_say_the_same_facts(runs):
    """The HTML header said '1,855,741 events' where the terminal said '1.86M
    events'; both now take `report.run_facts` (the page without the wall time)."""
    from incast.html import run_report_html
    from incast.report import header_text, run_facts

    results = runs[-1]
    facts = run_facts(results)
    assert facts.events_text is not None and facts.events_text.endswith("M events")
    meta = f"seed {facts.seed}, simulated {facts.simulated}, {facts.events_text}"
    assert f'<p class="meta">{meta}</p>' in run_report_html(results)
    terminal = header_text(results)
    assert f"simulated {facts.simulated} in " in terminal
    assert facts.events_text in terminal
