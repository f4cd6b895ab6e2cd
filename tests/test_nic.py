"""The NIC blocks of a run's summary (`[nic]`: transmit queues, the receive
path, each host's PCIe link; issue 20 items 3 and 4) in the text report, and a
multi-host NIC through the Python API."""

from __future__ import annotations

import io

from rich.console import Console

import incast
from incast.report import nic_rows, print_summary

# Two NIC ports on one 25 Gb/s switch, four hosts behind each, every host's PCIe
# link at 10 Gb/s; hosts 0-3 each send 1 MB to hosts 4-7.
_SLED = """
name = "sled"
[topology]
kind = "single_switch"
hosts = 2
link_rate = "25Gbps"
[nic]
hosts = 4
pcie_rate = "10Gbps"
[nic.receive]
ecn_k = "64KB"
""" + "".join(f'[[workload.flows]]\nsrc = {h}\ndst = {4 + h}\nsize = "1MB"\n' for h in range(4))


def test_multi_host_run_reports_its_nic():
    res = incast.run(_SLED)
    flows = res.flows
    assert len(flows) == 4 and (flows["finished"] == 1).all()
    # Each host's PCIe link caps it at 10 Gb/s: no flow beats 1 MB of wire bytes at
    # 10 Gb/s (1,000,000 B + 685 segments x 40 B of headers = 0.822 ms).
    assert (flows["fct_us"] >= 822.0).all()
    assert res.summary["pcie"]["gbps"] == 10.0
    out = io.StringIO()
    print_summary(res, Console(file=out, width=160))
    text = out.getvalue()
    assert "NIC" in text and "host PCIe transmit cap 10.00 Gb/s" in text
    assert "receive queue shared" in text
    # Its own section, not the catch-all one.
    assert "pcie.gbps" not in text


def test_nic_rows_cover_every_block_and_nothing_without_them():
    summary = {
        "nic_queues": {
            "split": "cc",
            "limit_bytes": 256_000,
            "queues": {"dctcp": {"max_bytes": 30_000, "mean_bytes": 1_000.0}},
        },
        "nic_receive": {
            "pcie_gbps": 5.0,
            "queues": {"shared": {"max_bytes": 1_000_000, "ecn_marks": 12, "drops": 3}},
        },
        "pcie": {"gbps": 8.0, "max_host_tx_bytes": 2_500_000},
    }
    rows = dict(nic_rows(summary))
    assert rows["transmit queue dctcp (cc)"] == "peak 30 KB, mean 1 KB (limit 256 KB)"
    assert rows["receive queue shared (PCIe 5.00 Gb/s)"] == "peak 1 MB, 12 CE marks, 3 drops"
    assert rows["host PCIe transmit cap 8.00 Gb/s"] == "busiest host sent 2.5 MB"
    assert nic_rows({}) == []
