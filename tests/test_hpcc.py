"""HPCC simulator interop: `incast import-hpcc`, `incast run --hpcc` and `incast.run_hpcc`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import incast
from incast.cli import cli

# The HPCC simulator's shipped files, bundled with the repository.
BUNDLED_HPCC = Path(__file__).resolve().parent.parent / "scenarios" / "hpcc"

# Two racks of two hosts (ids 0, 1 and 2, 3) under ToRs 4 and 5, joined by spine 6.
TOPOLOGY = """\
7 3 6
4 5 6
0 4 100Gbps 1000ns 0.000000
1 4 100Gbps 1000ns 0.000000
2 5 100Gbps 1000ns 0.000000
3 5 100Gbps 1000ns 0.000000
4 6 100Gbps 1000ns 0.000000
5 6 100Gbps 1000ns 0.000000
"""

CONFIG = """\
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE mix/topo.txt
FLOW_FILE mix/flow.txt
TRACE_FILE mix/trace.txt
TRACE_OUTPUT_FILE mix/mix.tr
FCT_OUTPUT_FILE mix/fct.txt
PFC_OUTPUT_FILE mix/pfc.txt
SIMULATOR_STOP_TIME 2.01
CC_MODE 1
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 300
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 0
GLOBAL_T 1
VAR_WIN 0
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.01
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 1
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP 1 100000000000 1600
KMIN_MAP 1 100000000000 400
PMAX_MAP 1 100000000000 0.20
BUFFER_SIZE 32
QLEN_MON_FILE mix/qlen.txt
QLEN_MON_START 99000000000
QLEN_MON_END 99000000000
"""

N_FLOWS = 20


def _flows() -> str:
    """20 flows among the 4 hosts, 1 KB to 200 KB, starting at 2 s, 2 us apart."""
    hosts = [0, 1, 2, 3]
    lines = [f"{N_FLOWS}"]
    for i in range(N_FLOWS):
        src = hosts[i % 4]
        dst = hosts[(i + 1 + i // 4) % 4]
        if dst == src:
            dst = hosts[(i + 2) % 4]
        size = 1000 + (i * 9973) % 200_000
        lines.append(f"{src} {dst} 3 100 {size} {2 + i * 2e-6:.9f}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def hpcc_dir(tmp_path: Path) -> Path:
    """A tiny HPCC experiment; the config names mix/... files that sit next to it."""
    (tmp_path / "topo.txt").write_text(TOPOLOGY)
    (tmp_path / "flow.txt").write_text(_flows())
    (tmp_path / "config.txt").write_text(CONFIG)
    return tmp_path


def test_import_round_trip_validates(hpcc_dir, tmp_path):
    out = tmp_path / "conv" / "scenario.toml"
    runner = CliRunner()
    result = runner.invoke(cli, ["import-hpcc", str(hpcc_dir / "config.txt"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    csv = out.with_name("scenario_flows.csv")
    assert out.is_file() and csv.is_file()
    assert 'flow_file = "scenario_flows.csv"' in out.read_text()
    rows = csv.read_text().splitlines()
    assert rows[0] == "src,dst,size_bytes,start_ns,class"
    assert len(rows) == N_FLOWS + 1
    assert rows[1].startswith("h0,") and rows[1].endswith(",2000000000,3")
    result = runner.invoke(cli, ["validate", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: config")
    normalized = incast.validate(out)
    assert normalized["topology"]["kind"] == "explicit"
    assert normalized["rdma"]["cc"]["algorithm"] == "dcqcn"
    assert normalized["switch"]["pfc"]["mode"] == "until_resume"


def test_unknown_key_is_an_error_naming_it(hpcc_dir, tmp_path):
    cfg = hpcc_dir / "config.txt"
    cfg.write_text(CONFIG + "NOT_A_KEY 1\n")
    result = CliRunner().invoke(cli, ["import-hpcc", str(cfg), "--out", str(tmp_path / "x.toml")])
    assert result.exit_code == 2
    assert "NOT_A_KEY" in result.output and "config.txt:48" in result.output
    cfg.write_text(CONFIG.replace("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.1"))
    with pytest.raises(incast.ScenarioError, match="ERROR_RATE_PER_LINK"):
        incast.run_hpcc(cfg)


def _check_fct(text: str) -> list[list[str]]:
    lines = [line.split() for line in text.splitlines()]
    assert len(lines) == N_FLOWS
    for f in lines:
        assert len(f) == 8, f
        sip, dip, sport, dport, size, start, fct, standalone = f
        assert len(sip) == 8 and int(sip, 16) & 0xFF == 1
        assert dip != sip
        assert int(sport) >= 10000 and dport == "100"
        assert int(start) >= 2_000_000_000
        # HPCC's standalone FCT counts a full payload's serialisation on every hop on top of
        # the flow's bytes at the bottleneck, so an unloaded flow finishes slightly *below*
        # it (about 70 ns on this 2-hop path; HPCC's analysis floors the slowdown at 1).
        assert int(fct) >= int(standalone) - 100, f
        assert max(1.0, int(fct) / int(standalone)) >= 1.0
    return lines


def test_run_hpcc_writes_fct_and_pfc(hpcc_dir, tmp_path):
    out = tmp_path / "out"
    res = incast.run_hpcc(hpcc_dir / "config.txt", out=out)
    assert len(res.flows) == N_FLOWS
    assert (res.flows["finished"] == 1).all()
    lines = _check_fct((out / "fct.txt").read_text())
    assert (out / "fct.txt").read_text() == res.hpcc_fct
    # Completion order, and every flow once.
    finish = [int(f[5]) + int(f[6]) for f in lines]
    assert finish == sorted(finish)
    assert sorted(int(f[4]) for f in lines) == sorted(res.flows["size_bytes"].tolist())
    # Host 0 is 0b000001; its first flow has source port 10000.
    first = next(f for f in lines if f[0] == "0b000001" and f[5] == "2000000000")
    assert first[2] == "10000"
    pfc = (out / "pfc.txt").read_text()
    for line in pfc.splitlines():
        t, node, kind, ifindex, typ = (int(x) for x in line.split())
        assert kind in (0, 1) and ifindex >= 1 and typ in (0, 1)
        assert kind == (1 if node >= 4 else 0)


def test_run_hpcc_cli(hpcc_dir, tmp_path):
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        cli,
        ["run", "--hpcc", str(hpcc_dir / "config.txt"), "--out", str(out), "--no-plots", "-q"],
    )
    assert result.exit_code == 0, result.output
    assert (out / "flows.parquet").is_file()
    _check_fct((out / "fct.txt").read_text())
    assert (out / "pfc.txt").is_file()
    # Explicit overrides: a 2-flow file.
    two = tmp_path / "two.txt"
    two.write_text("2\n0 3 3 100 5000 2.0\n1 2 3 100 5000 2.0\n")
    out2 = tmp_path / "cli2"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--hpcc",
            str(hpcc_dir / "config.txt"),
            "--flows",
            str(two),
            "--topology",
            str(hpcc_dir / "topo.txt"),
            "--out",
            str(out2),
            "--no-plots",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert len((out2 / "fct.txt").read_text().splitlines()) == 2


def test_run_needs_exactly_one_input(hpcc_dir, tiny_file):
    result = CliRunner().invoke(cli, ["run"])
    assert result.exit_code == 2 and "exactly one" in result.output
    result = CliRunner().invoke(
        cli, ["run", str(tiny_file), "--hpcc", str(hpcc_dir / "config.txt")]
    )
    assert result.exit_code == 2


def test_shipped_fat_tree_imports(tmp_path):
    out = tmp_path / "fat.toml"
    toml_path, csv_path = incast.import_hpcc(
        BUNDLED_HPCC / "config_fat_web30_10ms_hp95.txt", out, flows=BUNDLED_HPCC / "web30_1ms.txt"
    )
    assert len(csv_path.read_text().splitlines()) == 406
    normalized = incast.validate(toml_path)
    assert normalized["rdma"]["cc"]["algorithm"] == "hpcc"
    assert normalized["rdma"]["window"] == "variable"
    assert len(normalized["topology"]["hosts"]) == 320


def test_import_options_choose_headroom_and_ack_class(hpcc_dir, tmp_path):
    """By default the import does what the HPCC simulator does (headroom 3 x rate x
    delay, ACKs in the data class and unpaused at the NIC); the options switch."""
    cfg = hpcc_dir / "config.txt"
    default, _ = incast.import_hpcc(cfg, tmp_path / "default.toml")
    d = incast.validate(default)
    assert d["switch"]["pfc"]["headroom"] == {"rule": "hpcc"}
    assert d["rdma"]["ctrl_class"] == 3 and d["rdma"]["ctrl_ignores_pause"] is True
    other, _ = incast.import_hpcc(
        cfg, tmp_path / "other.toml", headroom="formula", acks="high_priority"
    )
    o = incast.validate(other)
    assert o["switch"]["pfc"]["headroom"] is None
    assert o["rdma"]["ctrl_class"] == 7 and o["rdma"]["ctrl_ignores_pause"] is False
    res = incast.run_hpcc(cfg, acks="high_priority", headroom="formula")
    assert len(res.hpcc_fct.splitlines()) == N_FLOWS
    with pytest.raises(incast.ScenarioError, match="acks"):
        incast.run_hpcc(cfg, acks="urgent")


def test_ecmp_option_routes_as_the_hpcc_simulator(hpcc_dir, tmp_path):
    """`ecmp="hpcc"` writes `[routing] ecmp = "hpcc"` (and the flows' one destination
    port) into the scenario, which validates and runs: on this network every pair has one
    path, so the results equal the default's; incast's own hash stays the default. (That the
    paths equal the HPCC simulator's on its fat tree is checked in the Rust core,
    `hpcc_ecmp_paths_match_hpcc_sim`.)"""
    cfg = hpcc_dir / "config.txt"
    default, _ = incast.import_hpcc(cfg, tmp_path / "default.toml")
    assert "routing" not in incast.validate(default)
    path, _ = incast.import_hpcc(cfg, tmp_path / "hpcc.toml", ecmp="hpcc")
    assert incast.validate(path)["routing"] == {"ecmp": "hpcc", "dport": 100}
    res = incast.run_hpcc(cfg, ecmp="hpcc")
    assert res.hpcc_fct == incast.run_hpcc(cfg).hpcc_fct
    _check_fct(res.hpcc_fct)
    with pytest.raises(incast.ScenarioError, match="ecmp"):
        incast.run_hpcc(cfg, ecmp="random")
    # The rule needs HPCC node ids in the node names.
    renamed = tmp_path / "renamed.toml"
    renamed.write_text(path.read_text().replace('"s4"', '"tor4"'))
    with pytest.raises(incast.ScenarioError, match=r"routing\.ecmp.*switch `tor4` has none"):
        incast.validate(renamed)


def test_clock_option_runs_on_ns3_time(hpcc_dir, tmp_path):
    """`clock="ns3"` writes `[timing] tx_times = "ns3"`; its lone flows then finish
    earlier than on the exact clock, by under 1 ns a packet a hop (ns-3 truncates each
    transmission to whole nanoseconds; the FCTs equal the HPCC simulator's to the
    nanosecond on its fat tree: `lone_flows_match_hpcc_sim_on_ns3_clock` in the Rust
    core). The CLI takes it as `--import-option clock=ns3` and refuses unknown keys."""
    cfg = hpcc_dir / "config.txt"
    default, _ = incast.import_hpcc(cfg, tmp_path / "default.toml")
    assert "timing" not in incast.validate(default)
    path, _ = incast.import_hpcc(cfg, tmp_path / "ns3.toml", clock="ns3")
    assert incast.validate(path)["timing"] == {"tx_times": "ns3"}
    two = tmp_path / "two.txt"
    two.write_text("2\n0 1 3 100 500000 2.0\n2 3 3 100 500000 2.0\n")  # disjoint paths
    fct = {}
    for clock in ("exact", "ns3"):
        out = tmp_path / clock
        result = CliRunner().invoke(
            cli,
            ["run", "--hpcc", str(cfg), "--flows", str(two), "--out", str(out), "-q"]
            + ["--no-plots", "--import-option", f"clock={clock}"],
        )
        assert result.exit_code == 0, result.output
        lines = (out / "fct.txt").read_text().splitlines()
        fct[clock] = [int(line.split()[6]) for line in lines]
    assert len(fct["ns3"]) == 2, fct
    packets = 500  # 500 KB in 1000-byte payloads: 0.84 ns less each at the first link
    for exact, ns3 in zip(fct["exact"], fct["ns3"]):
        # 83 ns a 1048-byte packet instead of 83.84 at the first link, which sets the pace;
        # the few nanoseconds beyond are the last packet's and the ACK's shorter hops.
        assert abs((exact - ns3) - packets * 0.84) <= 5, fct
    result = CliRunner().invoke(
        cli, ["run", "--hpcc", str(cfg), "--import-option", "tick=ns3", "-q"]
    )
    assert result.exit_code == 2 and "unknown import option `tick`" in result.output
    with pytest.raises(incast.ScenarioError, match="clock"):
        incast.run_hpcc(cfg, clock="ps")
