"""fsspec's ``weir-tar`` protocol: the members of a ``.tar.zst`` that weir
wrote, at any fsspec URL, read from the archive's member index.

``weir-tar://dir/x.csv::s3://b/a.tar.zst`` is the member ``dir/x.csv`` of the
archive. Listing the archive reads its member index (docs/members.md), a
frame just before the seek table; opening a member reads and decodes only the
frames that hold its bytes, through the ``weir`` protocol's file
(:class:`weir.filesystem.WeirFile`, which checks every frame it decodes). So
``pandas.read_csv`` of one CSV inside a 100 GB archive reads megabytes::

    pandas.read_csv("weir-tar://logs/2026-11.csv::s3://b/a.tar.zst")
    fsspec.filesystem("weir-tar", fo="/data/a.tar.zst").glob("linux/**/*.c")

Before a member's bytes are handed out, its header blocks are parsed as tar
(Python's ``tarfile``, checksum included) and must name the path the index
lists, start and end where it says, and give its size; any disagreement is a
:class:`FormatError` naming the archive and the offset. A name the archive
does not hold is a ``FileNotFoundError``. Without an index (an archive another
tool wrote) the error says how to add one; ``tar://PATH::weir::URL`` reads
such an archive by walking every header instead (decoding every frame).
"""

from __future__ import annotations

import errno
import posixpath
import re
import tarfile
import threading
from collections import OrderedDict
from typing import Any, ClassVar

from fsspec.archive import AbstractArchiveFileSystem

from weir.errors import FormatError
from weir.filesystem import WeirFile, WeirFileSystem, _has_fsid, _reader, _version_of
from weir.frames import FrameIndex
from weir.members import Member, MemberIndex, read_member_index
from weir.seek_table import seek_table_problem

__all__ = ["MemberFile", "WeirTarFileSystem"]

# tar's type flags: a folder, a hard link, a symbolic link; files are "0"
# (and "\0", "7", GNU's sparse "S"); the rest (devices, FIFOs) hold no data.
_FOLDER, _HARD_LINK, _SYMBOLIC_LINK = b"5", b"1", b"2"
_FILE_TYPES = {b"0", b"\0", b"7", b"S"}
# Member indexes kept per process, by the archive's path, size and
# modification (or ETag), as weir:: keeps frame indexes: fsspec makes a new
# file system for each open of a URL, and parsing the index is most of an open.
_MEMBERS_CACHE_ENTRIES = 16
_members_cache: OrderedDict[tuple[Any, ...], tuple[MemberIndex, dict[str, Member]]] = OrderedDict()
_members_lock = threading.Lock()
# Links followed before giving up (tar's own limit is a cycle; this is one).
_MAX_LINKS = 32


def _fs_name(path: bytes | str) -> str:
    """The member's name under the file system, as fsspec's ``tar://`` names
    it: no trailing slash, runs of slashes as one."""
    text = (path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path).rstrip("/")
    return re.sub("/+", "/", text) if "//" in text else text


class WeirTarFileSystem(AbstractArchiveFileSystem):
    """The members of one ``.tar.zst`` with a member index (read-only).

    ``fo`` is the archive's path on the target file system (``target_protocol``
    and ``target_options``, or ``fs``; default: local), which fsspec passes
    when it unchains ``weir-tar://MEMBER::URL``."""

    protocol: ClassVar[str | tuple[str, ...]] = "weir-tar"
    root_marker = ""
    # As fsspec's tar://: an instance holds one archive's index.
    cachable = False

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        # Members are named from the archive's root.
        return super()._strip_protocol(path).lstrip("/")

    def __init__(
        self,
        fo: str = "",
        target_protocol: str | None = None,
        target_options: dict[str, Any] | None = None,
        fs: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(fo, str) or not fo:
            raise ValueError("weir-tar needs the archive's path or URL (fo), e.g. weir-tar://MEMBER::s3://b/a.tar.zst")
        self.weir = WeirFileSystem(target_protocol=target_protocol, target_options=target_options, fs=fs)
        target = self.weir.target
        self.fo = target._strip_protocol(fo)
        details = target.info(self.fo)
        if details.get("type") != "file":
            raise IsADirectoryError(errno.EISDIR, "weir-tar reads a .tar.zst file, not a folder", self.fo)
        self.frames: FrameIndex = self.weir._index(self.fo, dict(details))
        key = (id(target) if not _has_fsid(target) else target.fsid, self.fo, details.get("size"), _version_of(details))
        with _members_lock:
            cached = _members_cache.get(key)
            if cached is not None:
                _members_cache.move_to_end(key)
        if cached is None:
            members = self._read_members(details["size"])
            if members.content_size != self.frames.size:
                raise FormatError(
                    f"{self.fo}: the member index at offset {members.offset} describes "
                    f"{members.content_size} bytes of content, but the archive holds {self.frames.size}"
                )
            # By name, the last member of a name winning, as tar x leaves it.
            cached = members, {_fs_name(member.path): member for member in members.members}
            with _members_lock:
                _members_cache[key] = cached
                while len(_members_cache) > _MEMBERS_CACHE_ENTRIES:
                    _members_cache.popitem(last=False)
        self.members, self.by_name = cached
        self.dir_cache: dict[str, dict[str, Any]] | None = None
        self._children: dict[str, list[str]] = {}

    def _read_members(self, size: int) -> MemberIndex:
        with self.weir.target.open(self.fo, "rb", cache_type="none") as handle:
            index = read_member_index(_reader(handle), size, self.fo)
            # The index is found from the seek table: a table that is there but corrupt hides it.
            problem = seek_table_problem(_reader(handle), size) if index is None else None
        if problem is not None:
            raise FormatError(
                f"{self.fo}: corrupt seek table, so its member index cannot be found: {problem} "
                f"(`weir -t {posixpath.basename(self.fo)}` says more)"
            )
        if index is None:
            raise FormatError(
                f"{self.fo}: no member index (weir writes one when it compresses a tar; add one with "
                f"`weir --index {posixpath.basename(self.fo)}`, or read it whole as tar://MEMBER::weir::URL)"
            )
        return index

    def _describe(self, member: Member) -> dict[str, Any]:
        kind = "directory" if member.type == _FOLDER else "file"
        size = 0 if kind == "directory" else self._resolve(member).size
        return {
            "name": _fs_name(member.path),
            "size": size,
            "type": kind,
            "mode": member.mode,
            "mtime": member.mtime,
            "uid": member.uid,
            "gid": member.gid,
            "uname": member.uname.decode("utf-8", "surrogateescape"),
            "gname": member.gname.decode("utf-8", "surrogateescape"),
            "linkname": member.link.decode("utf-8", "surrogateescape"),
            "tar_type": member.type.decode("latin-1"),
            "offset": member.header_offset,
            "offset_data": member.data_offset,
            "devmajor": member.devmajor,
            "devminor": member.devminor,
        }

    def _get_dirs(self) -> None:
        if self.dir_cache is not None:
            return
        # Folders the archive implies (a member a/b/c without a/ listed) as fsspec's tar:// lists them.
        cache = {name: {"name": name, "size": 0, "type": "directory"} for name in self._all_dirnames(self.by_name)}
        cache.update({name: self._describe(member) for name, member in self.by_name.items()})
        children: dict[str, list[str]] = {}
        for name in cache:
            children.setdefault(name.rpartition("/")[0], []).append(name)
        self._children = {parent: sorted(names) for parent, names in children.items()}
        self.dir_cache = cache

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        """The folder's members (a file: itself), from a map of each folder's
        children: fsspec's archive ``ls`` scans every member per call, which
        made ``find`` over 58,000 members take many minutes."""
        self._get_dirs()
        assert self.dir_cache is not None
        path = self._strip_protocol(path).rstrip("/")
        names = self._children.get(path)
        if names is None:
            info = self.info(path)  # FileNotFoundError when it is not there
            names = [] if info["type"] == "directory" else [info["name"]]
        return [self.dir_cache[name] for name in names] if detail else list(names)

    def _resolve(self, member: Member) -> Member:
        """The member whose data ``member`` reads: itself, or the end of its
        chain of links (a hard link's target, a symbolic link's, as
        ``tarfile.extractfile`` follows them). A link to nothing held is a
        ``FileNotFoundError``; the size of a dangling one is 0 for listing."""
        seen = 0
        while member.type in (_HARD_LINK, _SYMBOLIC_LINK):
            target = member.link.decode("utf-8", "surrogateescape")
            if member.type == _SYMBOLIC_LINK:
                target = posixpath.join(posixpath.dirname(member.name), target)
            target = _fs_name(posixpath.normpath(target))
            found = self.by_name.get(target)
            seen += 1
            if found is None or seen > _MAX_LINKS:
                return Member(member.path, 0, 0, 0, 0, 0, 0, 0, 0, b"?", member.link, b"", b"")
            member = found
        return member

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> MemberFile:
        """The member ``path`` (fsspec's block size and cache options do not
        apply: the frames read are the cache)."""
        if mode != "rb":
            raise NotImplementedError(f"weir-tar:// opens members for reading only, not {mode!r}")
        name = _fs_name(self._strip_protocol(path))
        member = self.by_name.get(name)
        if member is None:
            raise FileNotFoundError(errno.ENOENT, f"not a member of {self.fo}", name)
        if member.type == _FOLDER:
            raise IsADirectoryError(errno.EISDIR, f"a folder in {self.fo}", name)
        target = self._resolve(member)
        if target.type == b"?":
            raise FileNotFoundError(
                errno.ENOENT, f"a link in {self.fo} to {member.link!r}, which it does not hold", name
            )
        if target.type not in _FILE_TYPES:
            raise ValueError(f"{name} in {self.fo} is not a file (tar type {target.type!r}): it holds no data")
        content = WeirFile(self.weir, self.fo, self.frames, frame_cache=self.weir.frame_cache)
        try:
            archive, info = self._checked_header(content, target)
            return MemberFile(content, archive, info, f"{self.fo}::{name}")
        except BaseException:
            content.close()
            raise

    def _checked_header(self, content: WeirFile, member: Member) -> tuple[tarfile.TarFile, tarfile.TarInfo]:
        """The member's header blocks parsed by ``tarfile`` from ``content``
        (only those bytes are read), refused unless they are the member the
        index lists: its path, where its data starts, its size."""

        def disagrees(detail: str) -> FormatError:
            return FormatError(
                f"{self.fo}: member index disagrees with the archive: {member.name!r}, listed at offset "
                f"{member.header_offset} of the content, {detail}"
            )

        content.seek(member.header_offset)
        try:
            archive = tarfile.TarFile(fileobj=content, mode="r")
            info = archive.firstmember
        except tarfile.TarError as error:
            raise disagrees(f"has no tar header there ({error})") from error
        except EOFError as error:
            raise disagrees("has no tar header there (the content ends)") from error
        if info is None:
            raise disagrees("has no tar header there (an end block, or a checksum that fails)")
        # tarfile reads names as UTF-8, other bytes kept as surrogates: the stored bytes again.
        stored = info.name.encode(archive.encoding, "surrogateescape").rstrip(b"/")
        if stored != member.path.rstrip(b"/"):
            raise disagrees(f"but the header there names {stored!r}")
        # A pax sparse member of format 1.0 keeps its map at the start of its data: tarfile's data starts after it.
        starts = info.offset_data == member.data_offset or (
            info.sparse is not None and member.data_offset <= info.offset_data <= member.end
        )
        if not starts:
            raise disagrees(f"but its data starts at {info.offset_data}, not {member.data_offset}")
        if info.size != member.size:
            raise disagrees(f"but its header gives it {info.size} bytes, not {member.size}")
        # Its data and padding as they stand (a sparse member's stored data is not its size).
        stored_data = (info.size + 511) & ~511
        if info.sparse is None and member.type != b"S" and member.data_length != stored_data:
            raise disagrees(
                f"but its header gives it {stored_data} bytes of data and padding, not {member.data_length}"
            )
        return archive, info


class MemberFile(tarfile.ExFileObject):
    """One member's bytes, as ``tarfile.extractfile`` gives them (sparse
    members filled in), over the archive's content: reads decode only the
    frames that hold them. Closing it closes the content."""

    def __init__(self, content: WeirFile, archive: tarfile.TarFile, info: tarfile.TarInfo, name: str) -> None:
        super().__init__(archive, info)
        self._content = content
        self.size = info.size
        self.path = name

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._content.close()
