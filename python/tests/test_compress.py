"""weir.dask.compress on a real cluster: byte for byte weir's own output."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import run_weir, same_bytes, text_lines
from tar_archives import add_long_names, gnu_tar, make_tree

from weir.dask import compress, default_blocksize, parse_size, plan_tasks, seek_table
from weir.dask_tasks import Entry, frame_spans

MiB = 1 << 20


def test_default_blocks_give_weir_T2s_bytes(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # 20 MB: two full 8 MiB frames and a short one, each task one frame.
    expected = run_weir(weir_bin, "-T2", "-c", text_file)
    dst = tmp_path / "lines.txt.zst"
    result = compress(str(text_file), str(dst), scheduler=cluster, blocksize=8 * MiB)
    assert same_bytes(dst.read_bytes(), expected)
    assert (result.parts, result.frames, result.output_size) == (3, 3, len(expected))
    assert sorted(os.listdir(tmp_path)) == ["lines.txt.zst"]  # no part, no temporary left


def test_by_default_one_task_per_worker_thread(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # 20 MB on 2 worker threads: 3 frames of 8 MiB, so 2 tasks of 2 frames and 1.
    expected = run_weir(weir_bin, "-T2", "-c", text_file)
    dst = tmp_path / "lines.txt.zst"
    result = compress(str(text_file), str(dst), scheduler=cluster)
    assert same_bytes(dst.read_bytes(), expected)
    assert (result.parts, result.frames) == (2, 3)


def test_default_blocksize_is_whole_frames_per_thread() -> None:
    assert default_blocksize(20_000_000, 8 * MiB, 2) == 16 * MiB
    assert default_blocksize(16 * MiB, 8 * MiB, 2) == 8 * MiB
    assert default_blocksize(1000, 8 * MiB, 2) == 8 * MiB
    assert default_blocksize(0, 8 * MiB, 2) == 8 * MiB  # an empty file: one empty task
    assert default_blocksize(1_361_950_720, 8 * MiB, 2) == 656 * MiB  # the tarball: 163 frames, 82 a task
    assert default_blocksize(100 * MiB, MiB, 0) == 100 * MiB  # no thread reported: one task


def test_by_default_each_task_gets_every_nth_frame() -> None:
    # Not contiguous halves: task i reads frames i, i + n, ... (n tasks), so
    # a file whose halves differ keeps both workers busy to the end.
    frame = 8 * MiB
    assert plan_tasks(5 * frame, frame, 2) == [
        [(0, frame), (2 * frame, frame), (4 * frame, frame)],
        [(frame, frame), (3 * frame, frame)],
    ]
    assert plan_tasks(2 * frame + 1, frame, 2) == [[(0, frame), (2 * frame, 1)], [(frame, frame)]]
    assert plan_tasks(3 * frame, frame, 8) == [[(0, frame)], [(frame, frame)], [(2 * frame, frame)]]
    assert plan_tasks(3 * frame + 5, frame, 1) == [[(0, 3 * frame + 5)]]  # one thread: SRC whole
    assert plan_tasks(1000, frame, 2) == [[(0, 1000)]]
    assert plan_tasks(0, frame, 2) == [[(0, 0)]]
    # A block size given: contiguous blocks, as before.
    assert plan_tasks(20_000_000, frame, 2, blocksize=frame) == [
        [(0, frame)],
        [(frame, frame)],
        [(2 * frame, 20_000_000 - 2 * frame)],
    ]
    # The tarball: 163 frames, 82 and 81 a task, none more than the contiguous block.
    tarball = 1_361_950_720
    tasks = plan_tasks(tarball, frame, 2)
    assert [len(ranges) for ranges in tasks] == [82, 81]
    assert sorted(r for ranges in tasks for r in ranges) == [
        (o, min(frame, tarball - o)) for o in range(0, tarball, frame)
    ]
    assert max(sum(length for _, length in ranges) for ranges in tasks) <= default_blocksize(tarball, frame, 2)


def test_the_join_takes_each_frame_from_the_part_that_holds_it() -> None:
    # 3 frames of 4 bytes and one of 1 in two parts (frames 0, 2 and 1, 3):
    # DST is part 0's first frame, part 1's first, part 0's second, part 1's second.
    tasks = [[(0, 4), (8, 4)], [(4, 4), (12, 1)]]
    entries: list[list[Entry]] = [[(10, 4, 1), (11, 4, 3)], [(12, 4, 2), (5, 1, 4)]]
    spans, frames = frame_spans(tasks, entries)
    assert spans == [(0, 0, 10), (1, 0, 12), (0, 10, 11), (1, 12, 5)]
    assert [checksum for _, _, checksum in frames] == [1, 2, 3, 4]
    # One range of several frames: the part whole, in one span.
    assert frame_spans([[(0, 9)]], [[(10, 4, 1), (11, 4, 2), (3, 1, 3)]])[0] == [(0, 0, 24)]
    with pytest.raises(RuntimeError, match="part 0's frames do not end where its range of SRC at 0"):
        frame_spans([[(0, 3), (8, 4)]], [[(10, 4, 1), (11, 4, 3)]])  # weir cut elsewhere


@pytest.mark.parametrize("level", [3, 19])
@pytest.mark.parametrize("kind", ["text", "tar"])
def test_interleaved_frames_are_weirs_bytes(
    cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path, kind: str, level: int
) -> None:
    # The default plan on 2 worker threads: 1, 2, 3 and 5 frames, and 2
    # frames and a byte (the last task's last range short), each DST the
    # bytes of weir -T2 SRC, a tar's member index included.
    frame = 256 << 10
    content = tar_file.read_bytes() if kind == "tar" else text_lines(6 * frame, seed=3)
    for frames, more, tasks in [(1, 0, 1), (2, 0, 2), (3, 0, 2), (5, 0, 2), (2, 1, 2)]:
        src = tmp_path / f"{kind}-{frames}-{more}"
        src.write_bytes(content[: frames * frame + more])
        dst = tmp_path / f"{src.name}.zst"
        result = compress(str(src), str(dst), scheduler=cluster, level=level, frame=frame)
        expected = run_weir(weir_bin, "-T2", "-c", f"-{level}", "-B256K", src)
        assert same_bytes(dst.read_bytes(), expected), src.name
        assert (result.parts, result.frames) == (tasks, frames + (more > 0))
    assert not [path.name for path in tmp_path.iterdir() if path.name.startswith(".")]  # no part, no temporary


def test_blocks_of_several_small_frames(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # -B 1M: blocks of 3 frames, the last block short (20 MB = 19 frames + a part).
    expected = run_weir(weir_bin, "-c", "-B1M", "-5", text_file)
    dst = tmp_path / "out.zst"
    result = compress(str(text_file), str(dst), scheduler=cluster, level=5, frame=MiB, blocksize=3 * MiB)
    assert same_bytes(dst.read_bytes(), expected)
    assert result.parts == 7
    assert same_bytes(run_weir(weir_bin, "-dc", dst), text_file.read_bytes())


def test_a_block_not_a_multiple_of_the_frame_still_round_trips(cluster: str, weir_bin: Path, tmp_path: Path) -> None:
    src = tmp_path / "odd.txt"
    src.write_bytes(text_lines(3_000_000, seed=7))
    dst = tmp_path / "odd.txt.zst"
    compress(str(src), str(dst), scheduler=cluster, frame=MiB, blocksize=700_000)
    assert same_bytes(run_weir(weir_bin, "-dc", dst), src.read_bytes())
    assert run_weir(weir_bin, "-d", "--range=1000000:+5000", "-c", dst) == src.read_bytes()[1_000_000:1_005_000]


@pytest.mark.parametrize("size", [0, 1000])
def test_tiny_and_empty_files_match_weir(cluster: str, weir_bin: Path, tmp_path: Path, size: int) -> None:
    src = tmp_path / "tiny"
    src.write_bytes(text_lines(size, seed=1)[:size])
    dst = tmp_path / "tiny.zst"
    compress(str(src), str(dst), scheduler=cluster)
    assert dst.read_bytes() == run_weir(weir_bin, "-c", "-B8M", src)
    assert same_bytes(run_weir(weir_bin, "-dc", dst), src.read_bytes())


def test_pyzstd_reads_a_dst_through_its_seek_table(cluster: str, text_file: Path, tmp_path: Path) -> None:
    pyzstd = pytest.importorskip("pyzstd")
    dst = tmp_path / "lines.zst"
    compress(str(text_file), str(dst), scheduler=cluster, frame=2 * MiB, blocksize=4 * MiB)
    content = text_file.read_bytes()
    with pyzstd.SeekableZstdFile(str(dst), "rb") as seekable:
        assert seekable.seek(0, os.SEEK_END) == len(content)
        seekable.seek(13_000_001)
        assert seekable.read(70_000) == content[13_000_001:13_070_001]


def test_a_failed_attempt_is_retried(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # A weir that fails the first time any task runs it (mkdir is atomic):
    # Dask runs that task again, and the output is still weir's own.
    marker = tmp_path / "failed-once"
    flaky = tmp_path / "flaky-weir"
    flaky.write_text(
        f'#!/bin/sh\nmkdir "{marker}" 2>/dev/null && {{ echo "disk on fire" >&2; exit 1; }}\nexec "{weir_bin}" "$@"\n'
    )
    flaky.chmod(0o755)
    dst = tmp_path / "out" / "lines.zst"
    dst.parent.mkdir()
    compress(str(text_file), str(dst), scheduler=cluster, weir=str(flaky), frame=2 * MiB, blocksize=4 * MiB)
    assert marker.is_dir()
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-c", "-B2M", text_file))
    assert os.listdir(dst.parent) == ["lines.zst"]


def failing_weir(folder: Path, weir_bin: Path, flag: str, message: str) -> Path:
    """A weir that fails with ``message`` every time its arguments hold ``flag``."""
    broken = folder / "broken-weir"
    broken.write_text(
        f'#!/bin/sh\ncase "$*" in *{flag}*) echo "{message}" >&2; exit 1;; esac\nexec "{weir_bin}" "$@"\n'
    )
    broken.chmod(0o755)
    return broken


def test_a_task_failing_every_time_leaves_no_dst(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # The last range (20,000,000 - 4 x 4 MiB bytes) fails on every attempt.
    last = 20_000_000 - 4 * 4 * MiB
    src = tmp_path / "src.txt"
    src.write_bytes(text_file.read_bytes()[:20_000_000])
    broken = failing_weir(tmp_path, weir_bin, f"--stream-size={last}", "no space left")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="no space left"):
        compress(
            str(src),
            str(out / "src.zst"),
            scheduler=cluster,
            weir=str(broken),
            frame=2 * MiB,
            blocksize=4 * MiB,
            retries=1,
        )
    assert os.listdir(out) == []


def test_an_interleaved_task_failing_leaves_no_dst(
    cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path
) -> None:
    # The default plan: task 0 reads frames 0 and 2 (8 MiB and the last
    # 3.2 MB), one weir; it fails on every attempt.
    length = text_file.stat().st_size - 8 * MiB
    broken = failing_weir(tmp_path, weir_bin, f"--stream-size={length}", "no space left")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match=rf"2 ranges, {length} bytes from 0 exited 1: no space left"):
        compress(str(text_file), str(out / "lines.zst"), scheduler=cluster, weir=str(broken), retries=1)
    assert os.listdir(out) == []


def test_a_source_that_shrinks_fails_naming_it(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # SRC cut to 12 MB once the tasks have started (by the weir they run):
    # the task reading frame 1 (8 to 16 MiB) or frame 2 finds it short.
    src = tmp_path / "src.txt"
    src.write_bytes(text_file.read_bytes())
    cutting = tmp_path / "cutting-weir"
    cutting.write_text(f'#!/bin/sh\ntruncate -s 12000000 "{src}"\nexec "{weir_bin}" "$@"\n')
    cutting.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match=rf"{src} ended at \d+, before \d+: did it shrink\?"):
        compress(str(src), str(out / "src.zst"), scheduler=cluster, weir=str(cutting), retries=1)
    assert os.listdir(out) == []


def test_an_existing_dst_is_refused(cluster: str, text_file: Path, tmp_path: Path) -> None:
    dst = tmp_path / "exists.zst"
    dst.write_bytes(b"keep me")
    with pytest.raises(FileExistsError):
        compress(str(text_file), str(dst), scheduler=cluster)
    assert dst.read_bytes() == b"keep me"
    assert os.listdir(tmp_path) == ["exists.zst"]


def test_the_command_line(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # Relative names, as a user types them: relative to the caller's folder.
    dst = tmp_path / "cli.zst"
    (tmp_path / "in.txt").symlink_to(text_file)
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "weir.dask",
            "compress",
            "--scheduler",
            cluster,
            "in.txt",
            "cli.zst",
            "--level",
            "1",
            "--blocksize",
            "8MiB",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert process.returncode == 0, process.stderr
    assert "3 tasks, 3 frames" in process.stderr
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-1", "-T2", "-c", text_file))
    again = subprocess.run(
        [sys.executable, "-m", "weir.dask", "compress", "--scheduler", cluster, str(text_file), str(dst)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 1 and "exists" in again.stderr


def test_the_workers_import_this_weir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The cluster's processes run in its folder: PYTHONPATH=python/src, as
    # the tests are run, must still name this checkout's weir there.
    from weir.localcluster import LocalProcessCluster

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", "/opt/lib"]))
    environment = LocalProcessCluster(path=["/opt/weir"], folder=tmp_path / "cluster").environment()
    assert environment["PYTHONPATH"] == os.pathsep.join([str(tmp_path / "src"), "/opt/lib"])
    assert environment["PATH"].startswith("/opt/weir" + os.pathsep)


def test_sizes_and_the_table() -> None:
    assert [parse_size(s) for s in ("64M", "64MiB", "64mb", "1G", "1048576")] == [64 * MiB] * 3 + [1 << 30, MiB]
    assert seek_table([(10, 20, 7)]) == b""  # one frame: weir writes no table
    table = seek_table([(10, 20, 7), (11, 0, 8)])
    assert table[:8] == bytes.fromhex("5e2a4d18") + (2 * 12 + 9).to_bytes(4, "little")
    assert table[-9:] == bytes.fromhex("0200000080b1ea928f")


def test_a_source_read_through_fsspec(cluster: str, weir_bin: Path, text_file: Path, tmp_path: Path) -> None:
    # Not a plain local path: the workers read their ranges through fsspec
    # (here blockcache over file://, as they would an object store's URL).
    dst = tmp_path / "from-url.zst"
    compress(f"blockcache::file://{text_file}", str(dst), scheduler=cluster, frame=2 * MiB, blocksize=6 * MiB)
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-c", "-B2M", text_file))


# ------------------------------------------------------------------ a tar SRC
# weir writes a tar's member index (docs/members.md) before the seek table;
# DST must be those bytes too, and list and extract as weir's does.


@pytest.fixture(scope="module")
def tar_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GNU tar of about 7 MB (folders, a long name, links, a sparse file):
    six frames at -B1M."""
    root = tmp_path_factory.mktemp("tar")
    tree = make_tree(root, text_lines(6_000_000, seed=61))
    add_long_names(tree)
    return gnu_tar(tree, root / "tree.tar", "gnu")


def tar_names(tar: Path) -> bytes:
    return subprocess.run(["tar", "tf", str(tar)], capture_output=True, check=True).stdout


@pytest.mark.parametrize(("blocksize", "parts"), [(2 * MiB, 3), (16 * MiB, 1)])
def test_a_tar_gets_weirs_member_index(
    cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path, blocksize: int, parts: int
) -> None:
    dst = tmp_path / "tree.tar.zst"
    result = compress(str(tar_file), str(dst), scheduler=cluster, frame=MiB, blocksize=blocksize)
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-T2", "-c", "-B1M", tar_file))
    assert (result.parts, result.frames) == (parts, 6)
    assert run_weir(weir_bin, "-l", "--members", dst) == tar_names(tar_file)
    member = run_weir(weir_bin, "-d", "--member=tree/data/x.csv", "-c", dst)
    with tarfile.open(fileobj=io.BytesIO(member)) as archive:
        extracted = archive.extractfile("tree/data/x.csv")
        assert extracted is not None and extracted.read() == text_lines(6_000_000, seed=61)
    assert os.listdir(tmp_path) == ["tree.tar.zst"]  # no part, no temporary left


def test_a_tar_in_one_frame_gets_its_index(cluster: str, weir_bin: Path, tmp_path: Path) -> None:
    # One task, one frame: weir writes a table for the index all the same.
    (tmp_path / "small" / "d").mkdir(parents=True)
    (tmp_path / "small" / "d" / "f.txt").write_bytes(b"small\n" * 100)
    tar = gnu_tar(tmp_path / "small", tmp_path / "small.tar", "gnu")
    dst = tmp_path / "small.tar.zst"
    compress(str(tar), str(dst), scheduler=cluster)
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-c", tar))
    assert run_weir(weir_bin, "-l", "--members", dst) == tar_names(tar)


def test_a_tar_to_an_fsspec_url(cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path) -> None:
    # Not a local path: the parts are streamed to DST's file system, and
    # DST is still weir's own bytes, index included.
    dst = tmp_path / "remote.tar.zst"
    compress(str(tar_file), f"simplecache::file://{dst}", scheduler=cluster, frame=MiB, blocksize=3 * MiB)
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-c", "-B1M", tar_file))
    assert run_weir(weir_bin, "-l", "--members", dst) == tar_names(tar_file)
    assert os.listdir(tmp_path) == ["remote.tar.zst"]


def test_no_member_index_is_weirs_flag(cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path) -> None:
    expected = run_weir(weir_bin, "-c", "-B1M", "--no-member-index", tar_file)
    dst = tmp_path / "plain.tar.zst"
    compress(str(tar_file), str(dst), scheduler=cluster, frame=MiB, blocksize=3 * MiB, member_index=False)
    assert same_bytes(dst.read_bytes(), expected)
    cli = tmp_path / "cli.tar.zst"
    flags = ["--frame-size", "1M", "--blocksize", "3M", "--no-member-index", str(tar_file), str(cli)]
    process = subprocess.run(
        [sys.executable, "-m", "weir.dask", "compress", "--scheduler", cluster, *flags],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 0, process.stderr
    assert same_bytes(cli.read_bytes(), expected)


def test_a_failed_index_leaves_no_dst(cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path) -> None:
    # weir --index fails on the joined parts every time: no DST, no part, no temporary.
    broken = failing_weir(tmp_path, weir_bin, "--index", "disk on fire")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match=r"--index .* on the joined parts exited 1: disk on fire"):
        compress(
            str(tar_file), str(out / "t.tar.zst"), scheduler=cluster, weir=str(broken), frame=MiB, blocksize=3 * MiB
        )
    assert os.listdir(out) == []


def test_a_tar_at_19_is_weir_19s_bytes(cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path) -> None:
    # The join's weir --index compresses the index at the run's level, as weir -19 SRC does.
    dst = tmp_path / "tree.tar.zst"
    result = compress(str(tar_file), str(dst), scheduler=cluster, level=19, frame=MiB, blocksize=2 * MiB)
    assert result.parts == 3
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-T2", "-c", "-19", "-B1M", tar_file))
    assert run_weir(weir_bin, "-l", "--members", dst) == tar_names(tar_file)


def test_a_tar_source_url_is_indexed_by_a_decode(cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path) -> None:
    # A SRC given as a URL cannot be read in place by the join's weir: the
    # joined content is decoded once instead, to the same bytes.
    dst = tmp_path / "url.tar.zst"
    compress(f"blockcache::file://{tar_file}", str(dst), scheduler=cluster, frame=MiB, blocksize=3 * MiB)
    assert same_bytes(dst.read_bytes(), run_weir(weir_bin, "-c", "-B1M", tar_file))
    assert run_weir(weir_bin, "-l", "--members", dst) == tar_names(tar_file)


def test_a_tar_changed_before_the_join_fails_the_run(
    cluster: str, weir_bin: Path, tar_file: Path, tmp_path: Path
) -> None:
    # The join reads the index from SRC, not from the joined frames: a SRC
    # changed after its ranges were compressed (one byte, here by a weir
    # that changes it just before the join's --index runs) is caught by the
    # frames' checksums, and the run fails rather than write a wrong index.
    src = tmp_path / "tree.tar"
    content = bytearray(tar_file.read_bytes())
    at = 3 * MiB + 1000
    other = content[at] ^ 0x20
    src.write_bytes(bytes(content))
    changing = tmp_path / "changing-weir"
    change = f"printf '\\{other:03o}' | dd of=\"{src}\" bs=1 seek={at} conv=notrunc 2>/dev/null"
    changing.write_text(f'#!/bin/sh\ncase "$*" in *--index*) {change};; esac\nexec "{weir_bin}" "$@"\n')
    changing.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match=r"are not the content of frame 3 .*its content checksum differs"):
        compress(str(src), str(out / "t.tar.zst"), scheduler=cluster, weir=str(changing), frame=MiB, blocksize=2 * MiB)
    assert src.read_bytes()[at] == other
    assert os.listdir(out) == []
