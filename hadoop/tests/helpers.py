"""What the Spark tests compare: rows as Spark reads them, summed so that two reads of the same
lines agree whatever the partitioning."""

from __future__ import annotations

from pyspark.sql import functions as F


def stats(df, column: str = "value") -> tuple[int, int, int]:
    """(rows, sum of xxhash64 of the column, sum of its lengths)."""
    row = df.select(
        F.count(F.lit(1)),
        F.coalesce(F.sum(F.xxhash64(column).cast("decimal(38,0)")), F.lit(0)),
        F.coalesce(F.sum(F.length(column)), F.lit(0)),
    ).collect()[0]
    return int(row[0]), int(row[1]), int(row[2])


def filled_partitions(df) -> int:
    """How many of the read's partitions returned at least one row."""
    return df.select(F.spark_partition_id().alias("p")).distinct().count()


def read_text(spark, path, line_sep: str | None = "\n"):
    reader = spark.read
    if line_sep is not None:
        reader = reader.option("lineSep", line_sep)
    return reader.text(str(path))
