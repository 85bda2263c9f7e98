"""The `cluster` section (issues 51 and 52): weir's files past one machine, on this machine's cores.

Spark (cluster_spark.py): counting the corpus's lines through the Hadoop codec, split at frames, against Spark's
built-in one-partition read of the same .zst and against the plain corpus. Dask (cluster_dask.py): the same count
through the weir:: fsspec protocol on 2 worker processes against one partition, a seek to 1 GB and a 1 MiB read in
an open process, and one file compressed on 2 workers against weir -T2. Each half keeps its own results
(data["sections"]["cluster_spark"], ["cluster_dask"]) and can run alone (python3 cluster_spark.py --help)."""

import cluster_dask
import cluster_spark


def measure(bench):
    cluster_spark.measure(bench)
    cluster_dask.measure(bench)
    bench.data["sections"]["cluster"] = {"title": "Past one machine: Spark and Dask on weir's files"}


def report(data):
    sections = data["sections"]
    out = []
    if "cluster_spark" in sections:
        out += ["### Spark", "", cluster_spark.report(sections["cluster_spark"]), ""]
    if "cluster_dask" in sections:
        out += ["### Dask", "", cluster_dask.report(data), ""]
    return "\n".join(out)
