#!/usr/bin/env python3
"""A lying HTTP server for weir's remote-input tests (RemoteLyingServerTests).

Usage: lying-server.py PORT ROOT LOG

Serves the files of ROOT at /MODE/NAME, each MODE a way of lying (issue 80);
requests count from 1 for each path with its query (a query of its own
starts a count of its own), in arrival order:

  plain/NAME      the truth: Range served, strong ETag "1"
  gzip/NAME       every answer 200, the file gzipped, Content-Encoding: gzip
  gzip206/NAME    Range served on the gzipped file, Content-Encoding: gzip
  gzip2/NAME      as gzip, the coding in two Content-Encoding fields: gzip,
                  then identity (RFC 9110 5.3: one list, "gzip, identity")
  weak/NAME       request 1 from NAME, the later ones from NAME.v2 (same size):
                  ETag W/"1", then W/"2"; no Last-Modified
  swap/NAME       as weak, without any ETag or Last-Modified
  416/NAME        a range request answered 416 with Content-Range: bytes */SIZE
  whole206/NAME   a range request answered 206 with the whole file
  elsewhere/NAME  a range request answered 206 with the file's first MiB
  half/NAME       every answer's head (Content-Length of the whole), half its
                  body (rounded up), then the connection closed
  short206/NAME?b=B  a GET without Range: the whole file's head, half its body
                  (rounded up), then the connection closed; a suffix range
                  served; a range from an offset (the resumption) answered 206
                  with the bytes from it to B only, Content-Range saying so
                  (fewer bytes than asked, the total the file's): ETag "1"
  noetag/NAME?b=B  the last MiB and the stream with ETag "1", the stream
                  chunked and ending cleanly after its first B bytes; a
                  resumption answered 206 from NAME.v2, with no ETag
  weakcut/NAME?b=B  as noetag, every answer's ETag W/"1" (weak, the same for
                  both versions)
  cut/NAME?b=B    every answer 200 (no Range served): the whole file's head,
                  its first B bytes, then the connection closed
  loop/NAME       302 to itself, forever
  file/NAME       302 to file:///etc/passwd
  ftpcred/NAME    302 to ftp://weir:S3cr3tPassw0rd@127.0.0.1/NAME
  netloop/NAME    302 to //weir:S3cr3tPassw0rd@HOST/netloop/NAME (HOST the
                  request's Host), forever: a network-path reference
  spaced/NAME     as gzip, the field written `Content-Encoding : gzip` (a
                  space before the colon: RFC 9112 5.1, a response to reject)

Each request is logged to LOG as one line: PATH RANGE ACCEPT-ENCODING IF-MATCH STATUS.
"""
import gzip
import http.server
import os
import re
import socketserver
import sys
import threading
from urllib.parse import parse_qs

port, root, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
counts = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, fields, body, send=None):
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with lock, open(log_path, "a") as log:
            log.write(f"{self.path} {self.headers.get('Range', '-')} {self.headers.get('Accept-Encoding', '-')} "
                      f"{self.headers.get('If-Match', '-')} {status}\n")
        if send is None:
            self.wfile.write(body)
        else:
            self.wfile.write(body[:send])
            self.wfile.flush()
            self.close_connection = True

    def ranged(self, data, fields, send_half=False):
        """Serves Range (one range, FIRST-[LAST] or -SUFFIX) on data, else 200."""
        wanted = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted or "")
        if not match:
            body, status = data, 200
        else:
            first, last = match.groups()
            if first == "":
                start, end = max(0, len(data) - int(last)), len(data)
            else:
                start, end = int(first), min(len(data), int(last) + 1 if last else len(data))
            if start >= len(data):
                return self.answer(416, fields + [("Content-Range", f"bytes */{len(data)}")], b"")
            body, status = data[start:end], 206
            fields = fields + [("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")]
        self.answer(status, fields, body, send=(len(body) + 1) // 2 if send_half and body else None)

    def do_GET(self):
        # The query names nothing: a test makes a path new to the counts with one.
        mode, _, name = self.path.lstrip("/").partition("?")[0].partition("/")
        with lock:
            counts[self.path] = counts.get(self.path, 0) + 1
            number = counts[self.path]
        # A path that ends with / is its name's (weir must not name an output from what follows).
        path = os.path.join(root, name.rstrip("/"))
        if mode in ("weak", "swap") and number > 1:
            path += ".v2"
        if mode == "loop":
            return self.answer(302, [("Location", self.path)], b"")
        if mode == "ftpcred":
            return self.answer(302, [("Location", f"ftp://weir:S3cr3tPassw0rd@127.0.0.1/{name}")], b"")
        if mode == "netloop":
            return self.answer(302, [("Location", f"//weir:S3cr3tPassw0rd@{self.headers.get('Host')}{self.path}")],
                               b"")
        if mode == "file":
            return self.answer(302, [("Location", "file:///etc/passwd")], b"")
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            return self.answer(404, [], b"")
        asked = self.headers.get("Range") is not None
        if mode == "plain":
            return self.ranged(data, [("ETag", '"1"')])
        if mode == "gzip":
            return self.answer(200, [("Content-Encoding", "gzip")], gzip.compress(data, mtime=0))
        if mode == "spaced":
            return self.answer(200, [("Content-Encoding ", "gzip")], gzip.compress(data, mtime=0))
        if mode == "gzip2":
            return self.answer(200, [("Content-Encoding", "gzip"), ("Content-Encoding", "identity")],
                               gzip.compress(data, mtime=0))
        if mode == "gzip206":
            return self.ranged(gzip.compress(data, mtime=0), [("Content-Encoding", "gzip")])
        if mode == "weak":
            return self.ranged(data, [("ETag", f'W/"{min(number, 2)}"')])
        if mode == "swap":
            return self.ranged(data, [])
        if mode == "416" and asked:
            return self.answer(416, [("Content-Range", f"bytes */{len(data)}")], b"")
        if mode == "whole206" and asked:
            return self.answer(206, [("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")], data)
        if mode == "elsewhere" and asked:
            part = data[: 1 << 20]
            return self.answer(206, [("Content-Range", f"bytes 0-{len(part) - 1}/{len(data)}")], part)
        if mode == "short206":
            fields = [("ETag", '"1"')]
            if not asked:
                return self.answer(200, fields, data, send=(len(data) + 1) // 2)
            start = re.fullmatch(r"bytes=(\d+)-\d*", self.headers.get("Range"))
            if start is None:
                return self.ranged(data, fields)
            first, last = int(start.group(1)), int(parse_qs(self.path.partition("?")[2])["b"][0])
            return self.answer(206, fields + [("Content-Range", f"bytes {first}-{last - 1}/{len(data)}")],
                               data[first:last])
        if mode in ("noetag", "weakcut"):
            # The tail and the stream with ETag "1" (weakcut: W/"1"; the stream chunked, ending cleanly at
            # ?b=); a resumption answered 206 from NAME.v2 with no ETag (weakcut: the same W/"1").
            tag = '"1"' if mode == "noetag" else 'W/"1"'
            if asked and not self.headers.get("Range").startswith("bytes=-"):
                with open(path + ".v2", "rb") as file:
                    return self.ranged(file.read(), [] if mode == "noetag" else [("ETag", tag)])
            if asked:
                return self.ranged(data, [("ETag", tag)])
            cut = int(parse_qs(self.path.partition("?")[2])["b"][0])
            self.send_response(200)
            self.send_header("ETag", tag)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n" % cut + data[:cut] + b"\r\n0\r\n\r\n")
            return None
        if mode == "cut":
            # No Range served: every answer the whole file's head, its body cut at byte ?b=.
            return self.answer(200, [], data, send=int(parse_qs(self.path.partition("?")[2])["b"][0]))
        if mode == "half":
            return self.ranged(data, [("ETag", '"1"')], send_half=True)
        self.ranged(data, [])


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", port), Handler).serve_forever()
