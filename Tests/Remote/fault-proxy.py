#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for weir's remote-input tests (RemoteCommandTests).

Usage: fault-proxy.py PORT UPSTREAM LOG FAULT...

Forwards each GET to UPSTREAM (http://127.0.0.1:PORT of nginx), with the
request's Range, If-Match and If-Range, and sends the answer back, except
for the requests a FAULT names (requests count from 1, in arrival order):

  503:N     request N is answered 503 Service Unavailable
  503:N+    every request from N on is answered 503
  drop:N    request N: the head and half the body, then the connection closed
  short:N   request N: a Content-Length of the whole, half the body, then closed
  etag:N    from request N on, the object is another: its ETag is "changed",
            and a request with If-Match is answered 412 Precondition Failed
  stall:N   request N: the head and half the body, then nothing for 20 s, then
            closed, logged as the line `N stall-ended` (after a retry's, if the
            client timed out first)
  delay:MS  every request waits MS milliseconds before it is forwarded

Each request is logged to LOG as one line: N METHOD RANGE IF-MATCH STATUS.
"""
import http.client
import http.server
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

port, upstream, log_path = int(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2]), sys.argv[3]
faults = []
delay = 0.0
for spec in sys.argv[4:]:
    if spec.startswith("delay:"):
        delay = int(spec[6:]) / 1000
        continue
    kind, _, when = spec.partition(":")
    faults.append((kind, int(when.rstrip("+")), when.endswith("+")))
lock = threading.Lock()
count = [0]


def fault_for(number):
    for kind, at, onward in faults:
        if number == at or ((onward or kind == "etag") and number >= at):
            return kind
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log(self, number, status):
        with lock, open(log_path, "a") as log:
            log.write(f"{number} {self.command} {self.headers.get('Range', '-')} "
                      f"{self.headers.get('If-Match', '-')} {status}\n")

    def plain(self, number, status, reason):
        self.send_response(status, reason)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.log(number, status)

    def do_GET(self):
        with lock:
            count[0] += 1
            number = count[0]
        fault = fault_for(number)
        if delay:
            time.sleep(delay)
        if fault == "503":
            return self.plain(number, 503, "Service Unavailable")
        if fault == "etag" and self.headers.get("If-Match"):
            return self.plain(number, 412, "Precondition Failed")
        connection = http.client.HTTPConnection(upstream.hostname, upstream.port)
        headers = {name: self.headers[name] for name in ("Range", "If-Match", "If-Range") if self.headers.get(name)}
        connection.request("GET", self.path, headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() in ("connection", "keep-alive", "transfer-encoding", "content-length"):
                continue
            if name.lower() == "etag" and fault == "etag":
                value = '"changed"'
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.log(number, answer.status)
        if fault in ("drop", "short", "stall"):
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            if fault == "stall":
                time.sleep(20)
                with lock, open(log_path, "a") as log:
                    log.write(f"{number} stall-ended\n")
            if fault == "drop":
                # A reset, not a clean close: linger 0.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            return
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", port), Handler).serve_forever()
