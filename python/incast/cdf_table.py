"""The table `incast cdfs` prints: each bundled flow-size distribution's mean,
median, share of mice and source."""

from __future__ import annotations

from collections.abc import Iterable

from .fmt import format_bytes

#: Where each bundled CDF comes from (the paper, and whose table it is when
#: several are bundled); crates/incast-core/data/workloads/README.md has the
#: files copied, their commits and the cross-checks.
CDF_SOURCES = {
    "alistorage": "Alibaba storage, HPCC (Li et al., SIGCOMM 2019)",
    "cachefollower": "Facebook cache follower (Roy et al., SIGCOMM 2015)",
    "cachefollower_conweave": "Facebook cache follower (SIGCOMM 2015), ConWeave's table",
    "datamining": "VL2 data mining (Greenberg et al., SIGCOMM 2009), CONGA's table",
    "datamining_conweave": "VL2 data mining (SIGCOMM 2009), ConWeave's table",
    "datamining_pfabric": "VL2 data mining (SIGCOMM 2009), pFabric's table",
    "enterprise": "enterprise, CONGA (Alizadeh et al., SIGCOMM 2014)",
    "fb_hadoop": "Facebook Hadoop (Roy et al., SIGCOMM 2015), HPCC's table",
    "fb_hadoop_homa_w4": "Facebook Hadoop (SIGCOMM 2015), Homa's W4",
    "fb_hadoop_homasim": "Facebook Hadoop (SIGCOMM 2015), HomaSimulation's table",
    "google_all_rpc": "Google RPCs before 2008, Homa's W3 (SIGCOMM 2018)",
    "google_all_rpc_homasim": "Google RPCs, HomaSimulation's table",
    "google_search_rpc": "Google search RPCs, Homa's W2 (SIGCOMM 2018)",
    "homa_w1": "Facebook memcached (Atikoglu et al., SIGMETRICS 2012), Homa's W1",
    "homa_w5": "DCTCP web search as Homa's W5 (SIGCOMM 2018)",
    "imc10": "data centers in the wild (Benson et al., IMC 2010), pHost's table",
    "solar": "Alibaba storage, Solar (Miao et al., SIGCOMM 2022), ConWeave's table",
    "websearch": "web search, DCTCP (Alizadeh et al., SIGCOMM 2010)",
    "websearch_conweave": "web search, DCTCP (SIGCOMM 2010), ConWeave's table",
    "websearch_pfabric": "web search, DCTCP (SIGCOMM 2010), pFabric's table",
    "webserver": "Facebook web server (Roy et al., SIGCOMM 2015)",
    "webserver_conweave": "Facebook web server (SIGCOMM 2015), ConWeave's table",
}

#: The mice threshold of `incast cdfs`: flows of at most this many bytes.
MICE_BYTES = 100_000


def cdf_table_lines(stats: Iterable[tuple[str, float, float, float]]) -> list[str]:
    """The lines of the table, from the core's `bundled_cdf_stats(MICE_BYTES)`
    rows (name, mean bytes, median bytes, share of mice), and a closing note."""
    rows = [
        (name, format_bytes(mean), format_bytes(median), f"{mice:.1%}", CDF_SOURCES.get(name, "-"))
        for name, mean, median, mice in stats
    ]
    head = ("name", "mean", "median", "<= 100 KB", "source")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = []
    for row in [head, *rows]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:4], widths[1:])]
        lines.append("  ".join([*cells, row[4]]))
    lines.append("")
    lines.append(
        f"{len(rows)} CDFs, piecewise-linear in size (as sampled); <= 100 KB: the share of "
        'flows of at most 100,000 bytes. Use one as cdf = "NAME" in [[workload.poisson]]; '
        "provenance: crates/incast-core/data/workloads/README.md."
    )
    return lines
