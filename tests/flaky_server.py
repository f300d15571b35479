"""A local HTTP server (a thread on 127.0.0.1) that serves files and fails on purpose: answers
503 to the first requests, hangs up mid-body, ignores Range, announces no size, changes the file
between two requests (with an ETag, honouring If-Range). Every request is
logged as (method, path, Range header), so a test can check what the download asked for."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FlakyServer:
    def __init__(self):
        self.routes: dict[str, bytes] = {}
        self.log: list[tuple[str, str, str | None]] = []
        self.fail_first = 0           # the first N GETs answer 503
        self.retry_after = None       # ... with this Retry-After header (seconds)
        self.cut_first = 0            # the next N GETs send half of what they promise, then hang up
        self.ignore_range = False     # answer a Range request with 200 and the whole file
        self.announce_size = True     # False: no Content-Length (the body ends when the connection closes)
        self.head = True              # False: HEAD is not implemented (501)
        self.etag = None              # sent with every 200/206; an If-Range naming another one gets a 200
        self.after_cut = None         # (body, etag) the route switches to once a response was cut
        self._gets = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                outer.log.append(("HEAD", self.path, self.headers.get("Range")))
                body = outer.routes.get(self.path)
                if not outer.head:
                    self.send_error(501)
                    return
                self.send_response(200 if body is not None else 404)
                if outer.announce_size:
                    self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()

            def do_GET(self):
                rng = self.headers.get("Range")
                outer.log.append(("GET", self.path, rng))
                outer._gets += 1
                body = outer.routes.get(self.path)
                if outer._gets <= outer.fail_first:
                    self.send_response(503)
                    if outer.retry_after is not None:
                        self.send_header("Retry-After", str(outer.retry_after))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = 0
                if_range = self.headers.get("If-Range")
                stale = if_range is not None and if_range != outer.etag
                if rng and rng.startswith("bytes=") and not outer.ignore_range and not stale:
                    start = int(rng[6:].split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                part = body[start:]
                if outer.etag:
                    self.send_header("ETag", outer.etag)
                if outer.announce_size:
                    self.send_header("Content-Length", str(len(part)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if outer.cut_first > 0:          # promise everything, send half, hang up
                    outer.cut_first -= 1
                    self.wfile.write(part[: len(part) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    if outer.after_cut:                  # the file changes on the server meanwhile
                        outer.routes[self.path], outer.etag = outer.after_cut
                        outer.after_cut = None
                    return
                self.wfile.write(part)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def gets(self) -> list[str | None]:
        """The Range header of every GET so far."""
        return [rng for method, _, rng in self.log if method == "GET"]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def registry_text(url: str | None, sha: str | None, *, compression="bz2", name="toy", n=3000) -> str:
    """A one-dataset registry ('toy', svmlight, 3 features) whose train file is served at `url`."""
    return f"""
version: 1
datasets:
  toy:
    task: binary
    format: svmlight
    d: 3
    description: "toy set served by the test HTTP server"
    files:
      train: {{name: {name}, url: {url if url else 'null'}, compression: {compression}, sha256: {repr(sha) if sha else 'null'}, n: {n}}}
    split: {{protocol: stratified, test_fraction: 0.25}}
"""
