"""scenarios/htsim_compare.py: bad paths get a clear error naming the flag, not a traceback.
(Running htsim itself needs a csg-htsim checkout and minutes; docs/performance-history.md.)"""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scenarios" / "htsim_compare.py"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True)


def test_a_directory_that_is_not_htsim_is_named(tmp_path):
    done = run("--htsim", str(tmp_path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1
    assert "--htsim" in done.stderr and "main_dctcp_permutation.cpp" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # nothing written before the inputs are checked


def test_a_missing_bench_is_named(tmp_path):
    sim = tmp_path / "sim"
    (sim / "datacenter" / "old_tests").mkdir(parents=True)
    (sim / "datacenter" / "old_tests" / "main_dctcp_permutation.cpp").write_text("")
    missing = str(tmp_path / "no-such-bench")
    out = str(tmp_path / "out")
    done = run("--htsim", str(sim), "--out", out, "--bench", missing, cwd=tmp_path)
    assert done.returncode == 1
    assert "--bench" in done.stderr and "cargo build --release -p incast-bench" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_cli_is_named(tmp_path):
    sim = tmp_path / "sim"
    (sim / "datacenter" / "old_tests").mkdir(parents=True)
    (sim / "datacenter" / "old_tests" / "main_dctcp_permutation.cpp").write_text("")
    out = tmp_path / "out"
    missing = str(tmp_path / "no-such-incast")
    args = ("--htsim", str(sim), "--out", str(out), "--bench", sys.executable, "--cli", missing)
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 1
    assert "--cli" in done.stderr and "--cli ''" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
