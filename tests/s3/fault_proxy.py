"""An HTTP/1.1 proxy in front of an S3-compatible server that injects the faults of a real
network and a loaded S3: throttling, server errors, delays, dropped and reset connections.

    from fault_proxy import FaultProxy
    with FaultProxy("http://127.0.0.1:PORT", seed=1,
                    rates={"slowdown": .05, "error500": .03, "throttle": .02, "delay": .05,
                           "drop_before": .02, "drop_mid": .02, "reset": .01,
                           "drop_after_forward": .01},
                    delay_s=0.2) as proxy:
        env["AWS_ENDPOINT_URL"] = proxy.endpoint
        ...
        proxy.injected          # {"slowdown": 3, ...}: faults injected by kind
        proxy.requests          # requests received
        proxy.forwarded         # requests that reached the upstream
        proxy.max_in_flight     # the most requests at once (read, not yet answered)
        proxy.history           # a Decision (method, target, occurrence, kind) per request

    # Faults on chunk PUTs only, after the first 5 of them went through:
    FaultProxy(upstream, rates={"slowdown": 1.0}, methods=["PUT"], match=CHUNK_KEY,
               pass_first=5)

Each request (read whole, body included) gets at most one fault, drawn with the given
probabilities (their sum at most 1; the rest is forwarded untouched):

| kind | what the client sees | did the request reach the upstream? |
|---|---|---|
| `slowdown` | 503 with an S3 `<Error><Code>SlowDown</Code>...` body | no |
| `error500` | 500 `InternalError` | no |
| `throttle` | 429 with the same `SlowDown` body | no |
| `delay` | the upstream's answer, `delay_s` seconds late | yes |
| `drop_before` | the connection closed, no answer | no |
| `reset` | the connection reset (RST: SO_LINGER 0), no answer | no |
| `drop_mid` | the status line, the headers and part of the body, then the connection closed (the status line cut inside its code when the body is shorter than 2 bytes: a client reading a cut header block to its end would take it for a whole answer) | yes |
| `drop_after_forward` | the connection closed, no answer | yes: it happened, the client cannot know |

So an error status always means the request did not happen (a PUT answered 503 stored
nothing), while `drop_mid` and `drop_after_forward` are the real network's case of a
request that happened with its answer lost.

Which requests may get a fault (all by default; the others are forwarded untouched and
draw nothing): `only=` a function (method, target) -> bool, `methods=` ("GET", "PUT"),
`match=` a regular expression searched in the target's path (its part before "?"; e.g.
CHUNK_KEY, the chunk keys of Zarr v2 and v3 arrays, or "/c/"); a request must pass all
that are given. `pass_first=N` forwards the first N requests that pass them untouched
(in arrival order) and faults only later ones: with a rate of 1.0, a run that fails
midway, after exactly N such requests went through.

Determinism: a request's fault is a pure function of (seed, method, request target with
its query, occurrence), occurrence being how many requests of the same method and target
the proxy had seen before it (a retry of a request is the next occurrence). Two draws
come from a hash of those (the kind, and where drop_mid cuts), not from a shared random
stream, so which request gets which fault does not depend on the order connections
arrive in, on which connection a request comes, nor on how the client's threads
interleave: a client making the same requests (by method and target) gets the same faults
on the same requests on every run with the same seed. Identical requests in flight at
once get their occurrences in arrival order; being identical, it makes no difference
which gets which. `decisions()` is that mapping, for comparing two runs. (pass_first is
the one exception: which requests are the first N depends on their arrival.)

There is no `stall` kind (headers and part of a body, then silence): Tessera's stall
timeout is 30 s and not settable from its Python module or command line, too long for a
test; `drop_mid` covers a body that ends early.

The proxy reads each request whole and each upstream response whole before relaying it
(memory: the objects in flight), keeps client connections alive (HTTP/1.1) even though
moto's server closes its own after every answer (keep_alive=False relays that), keeps
one upstream connection per client connection while the upstream allows, answers `Expect: 100-continue` itself (and does not pass the header on;
SigV4 never signs it), and frames bodies by Content-Length or chunked encoding, relayed
byte for byte, so signatures stay valid.
"""
import collections
import hashlib
import itertools
import re
import socket
import socketserver
import struct
import threading
import time
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

FAULT_KINDS = ("slowdown", "error500", "throttle", "delay", "drop_before", "drop_mid",
               "reset", "drop_after_forward")

# kind: (status, reason, S3 error code, message)
ERROR_RESPONSES = {
    "slowdown": (503, "Slow Down", "SlowDown", "Please reduce your request rate."),
    "error500": (500, "Internal Server Error", "InternalError",
                 "We encountered an internal error. Please try again."),
    # 429 carries S3's throttling code too, as S3-compatible stores that answer 429 do;
    # SDKs (botocore's standard retries) know throttling by that code
    "throttle": (429, "Too Many Requests", "SlowDown", "Please reduce your request rate."),
}

_error_ids = itertools.count(1)

# The path of a chunk of a Zarr array: v3's default encoding ("/c/0/1", "/c" for a 0-d
# array, "/c.0.1" with "." as its separator) and v2's ("/0.1", "/0" in 1-d, "/0/1" with
# dimension_separator "/"). Shard keys are v3 chunk keys. Searched in a target's path.
CHUNK_KEY = r"(/c([/.][0-9]+)*|/[0-9]+(\.[0-9]+)*)$"

Decision = collections.namedtuple("Decision", "connection method target occurrence kind")
Decision.__doc__ = """One request the proxy read: its connection's number (accept order),
method, target (path and query as sent), occurrence (how many requests of this method
and target came before it) and fault kind (None: forwarded untouched)."""


def draw(seed, method, target, occurrence):
    """The two numbers in [0, 1) of one request: (kind, drop_mid's cut); a pure function
    of its arguments (see the module's docstring)."""
    digest = hashlib.blake2b(f"{seed}\0{method}\0{target}\0{occurrence}".encode(),
                             digest_size=16, person=b"tessera-faults").digest()
    first, second = struct.unpack("<QQ", digest)
    return first / 2.0**64, second / 2.0**64


def kind_of(rates, value):
    """The fault kind a draw of `value` picks with `rates` (None: none)."""
    edge = 0.0
    for candidate in FAULT_KINDS:
        edge += rates.get(candidate, 0.0)
        if value < edge:
            return candidate
    return None

MAX_LINE = 65536
MAX_HEADERS = 200


class ProxyError(Exception):
    """A malformed or truncated message (the connection is closed)."""


class FaultProxy:
    """See the module's docstring. `upstream`: "http://host:port". `rates`: a probability
    per kind of FAULT_KINDS (missing kinds 0). `delay_s`: the delay of a `delay` fault.
    `only`: a function (method, target) -> bool choosing the requests that may get a fault
    (default all; the others draw nothing). `keep_alive`: keep client connections open
    whatever the upstream does with its own (moto closes every one); False relays the
    upstream's Connection header. `port`: 0 picks a free one. `methods`, `match` (a regular
    expression, or a compiled one, searched in the target's path) and `pass_first`: see
    the module's docstring."""

    def __init__(self, upstream, *, seed=0, rates=None, delay_s=0.2, only=None,
                 methods=None, match=None, pass_first=0, keep_alive=True, host="127.0.0.1",
                 port=0, idle_timeout=300.0, upstream_timeout=300.0):
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"FaultProxy: upstream must be http://host:port, got {upstream!r}")
        self.upstream = (parts.hostname, parts.port)
        self.seed = seed
        self.delay_s = delay_s
        self.only = only
        self.methods = None if methods is None else frozenset(m.upper() for m in methods)
        self.match = re.compile(match) if isinstance(match, str) else match
        if pass_first < 0:
            raise ValueError("FaultProxy: pass_first must be >= 0")
        self.pass_first = int(pass_first)
        self.keep_alive = keep_alive
        self.idle_timeout = idle_timeout
        self.upstream_timeout = upstream_timeout
        self._lock = threading.Lock()
        self._rates = self._checked(rates or {})
        self.injected = collections.Counter()
        self.requests = 0
        self.matched = 0  # requests that passed only/methods/match (pass_first's included)
        self.passed = 0  # of those, forwarded untouched by pass_first
        self.forwarded = 0
        self.connections = 0
        self.in_flight = 0  # requests read and not yet answered (or dropped)
        self.max_in_flight = 0  # the most at once since the start (or reset_counters)
        self.history = []  # a Decision per request, in the order they were decided
        self._seen = collections.Counter()  # (method, target): requests so far
        self._open = set()
        self._server = _Server((host, port), _Handler, self)
        self._thread = None

    # ---- settings and counters ----------------------------------------------------------

    @staticmethod
    def _checked(rates):
        unknown = set(rates) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"FaultProxy: unknown fault kinds {sorted(unknown)}; known: "
                             f"{', '.join(FAULT_KINDS)}")
        if any(rate < 0 for rate in rates.values()):
            raise ValueError("FaultProxy: rates must be >= 0")
        if sum(rates.values()) > 1 + 1e-9:
            raise ValueError(f"FaultProxy: rates sum to {sum(rates.values()):g} > 1")
        return {kind: float(rates.get(kind, 0.0)) for kind in FAULT_KINDS}

    @property
    def rates(self):
        with self._lock:
            return dict(self._rates)

    def set_rates(self, rates):
        """Replaces the rates (missing kinds become 0); requests already read keep theirs."""
        checked = self._checked(rates)
        with self._lock:
            self._rates = checked

    def reset_counters(self):
        with self._lock:
            self.injected.clear()
            self.max_in_flight = self.in_flight
            self.requests = 0
            self.matched = 0
            self.passed = 0
            self.forwarded = 0
            self.history.clear()

    @property
    def faults(self):
        """Faults injected so far, all kinds."""
        with self._lock:
            return sum(self.injected.values())

    def kinds(self):
        """The fault (or None) of each request so far, in the order they were decided."""
        with self._lock:
            return [entry.kind for entry in self.history]

    def decisions(self):
        """{(method, target, occurrence): kind or None} of every request so far: what a
        replay with the same seed and the same requests gets, in whatever order."""
        with self._lock:
            return {(entry.method, entry.target, entry.occurrence): entry.kind
                    for entry in self.history}

    def targets(self, method=None, match=None):
        """The targets of the requests so far (in order) of `method` (any if None) whose
        path `match` (a regular expression) is found in (any if None)."""
        pattern = re.compile(match) if isinstance(match, str) else match
        with self._lock:
            return [entry.target for entry in self.history
                    if (method is None or entry.method == method)
                    and (pattern is None or pattern.search(entry.target.split("?", 1)[0]))]

    # ---- lifetime -----------------------------------------------------------------------

    @property
    def endpoint(self):
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def close(self):
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        with self._lock:
            open_sockets = list(self._open)
        for sock in open_sockets:  # wakes the handler threads blocked on a read
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.close()
        return False

    # ---- the handler's calls --------------------------------------------------------------

    def _connection_opened(self, sock):
        with self._lock:
            number = self.connections
            self.connections += 1
            self._open.add(sock)
        return number

    def _connection_closed(self, sock):
        with self._lock:
            self._open.discard(sock)

    def _chosen(self, method, target):
        if self.methods is not None and method.upper() not in self.methods:
            return False
        if self.match is not None and not self.match.search(target.split("?", 1)[0]):
            return False
        return self.only is None or self.only(method, target)

    def _decide(self, number, method, target):
        """The fault of one request (None: forward it) and drop_mid's cut, a fraction."""
        chosen = self._chosen(method, target)
        with self._lock:
            self.requests += 1
            occurrence = self._seen[method, target]
            self._seen[method, target] += 1
            kind, cut = None, 0.5
            if chosen:
                self.matched += 1
                if self.matched <= self.pass_first:
                    self.passed += 1
                else:
                    value, cut = draw(self.seed, method, target, occurrence)
                    kind = kind_of(self._rates, value)
            if kind is not None:
                self.injected[kind] += 1
            self.history.append(Decision(number, method, target, occurrence, kind))
        return kind, cut

    def _count_forwarded(self):
        with self._lock:
            self.forwarded += 1

    def _flight(self, change):
        with self._lock:
            self.in_flight += change
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def stats(self):
        """The counters as a dict (JSON-ready)."""
        with self._lock:
            return {"requests": self.requests, "matched": self.matched,
                    "passed": self.passed, "forwarded": self.forwarded,
                    "faults": sum(self.injected.values()), "injected": dict(self.injected),
                    "connections": self.connections, "max_in_flight": self.max_in_flight}


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address, handler, proxy):
        self.proxy = proxy
        super().__init__(address, handler)


# ---- HTTP/1.1 messages, read raw ---------------------------------------------------------

def _read_line(reader):
    line = reader.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise ProxyError("line too long")
    return line


def _read_exact(reader, size):
    data = reader.read(size)
    if len(data) != size:
        raise ProxyError(f"connection closed after {len(data)} of {size} body bytes")
    return data


def _read_head(reader):
    """(start line, [(name, value)], raw header lines) of a message; (None, ...) at a clean
    end of stream before the message."""
    start = _read_line(reader)
    while start in (b"\r\n", b"\n"):  # tolerated blank lines between messages
        start = _read_line(reader)
    if not start:
        return None, [], []
    headers, raw = [], []
    while True:
        line = _read_line(reader)
        if not line:
            raise ProxyError("connection closed inside the headers")
        if line in (b"\r\n", b"\n"):
            break
        if len(raw) >= MAX_HEADERS:
            raise ProxyError("too many headers")
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip().lower(), value.strip()))
        raw.append(line)
    return start, headers, raw


def _header(headers, name):
    for key, value in headers:
        if key == name:
            return value
    return None


def _read_body(reader, headers, until_close=False):
    """The body's raw bytes (chunked framing kept); until_close: read to end of stream
    when neither framing is given (responses only)."""
    encoding = _header(headers, "transfer-encoding")
    if encoding is not None and "chunked" in encoding.lower():
        out = bytearray()
        while True:
            line = _read_line(reader)
            if not line:
                raise ProxyError("connection closed inside a chunked body")
            out += line
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProxyError(f"bad chunk size line {line[:40]!r}") from None
            if size == 0:
                while True:  # trailers, then the blank line
                    trailer = _read_line(reader)
                    if not trailer:
                        raise ProxyError("connection closed inside chunked trailers")
                    out += trailer
                    if trailer in (b"\r\n", b"\n"):
                        return bytes(out)
            out += _read_exact(reader, size + 2)
    length = _header(headers, "content-length")
    if length is not None:
        try:
            size = int(length)
        except ValueError:
            raise ProxyError(f"bad Content-Length {length!r}") from None
        return _read_exact(reader, size) if size else b""
    if until_close:
        return reader.read()
    return b""


def _wants_close(start, headers):
    connection = (_header(headers, "connection") or "").lower()
    return "close" in connection or start.startswith(b"HTTP/1.0") or start.rstrip().endswith(
        b"HTTP/1.0")


class _Upstream:
    """One keep-alive connection to the upstream server."""

    def __init__(self, address, timeout):
        self.address = address
        self.timeout = timeout
        self.sock = None
        self.reader = None

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = self.reader = None

    def exchange(self, request, method):
        """Sends the request's bytes; returns the response's (start line, headers, raw
        header lines, body, framed: whether its length was known before its end). A
        reused connection the upstream had closed is reopened once; a connection the
        response asks to close is closed (the next request opens another)."""
        for attempt in (0, 1):
            reused = self.sock is not None
            if self.sock is None:
                self.sock = socket.create_connection(self.address, timeout=self.timeout)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.reader = self.sock.makefile("rb", buffering=1 << 16)
            try:
                self.sock.sendall(request)
                start, headers, raw = _read_head(self.reader)
                if start is None:
                    raise ProxyError("upstream closed the connection")
            except (OSError, ProxyError):
                self.close()
                if reused and attempt == 0:
                    continue  # a stale keep-alive connection: once more on a new one
                raise
            break
        while True:
            status = int(start.split()[1])
            if status >= 200 or status == 101:
                break
            start, headers, raw = _read_head(self.reader)  # skips 100 Continue and the like
            if start is None:
                raise ProxyError("upstream closed the connection after an interim answer")
        no_body = method == "HEAD" or status in (204, 304)
        body = b"" if no_body else _read_body(self.reader, headers, until_close=True)
        framed = (no_body or _header(headers, "content-length") is not None
                  or "chunked" in (_header(headers, "transfer-encoding") or "").lower())
        closes = _wants_close(start, headers) or not framed
        if closes:
            self.close()
        return start, headers, raw, body, framed


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        proxy = self.server.proxy
        sock = self.request
        sock.settimeout(proxy.idle_timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        number = proxy._connection_opened(sock)
        reader = sock.makefile("rb", buffering=1 << 16)
        upstream = _Upstream(proxy.upstream, proxy.upstream_timeout)
        outcome = "close"
        try:
            while (outcome := self._one_request(proxy, sock, reader, upstream,
                                                number)) == "next":
                pass
        except (OSError, ProxyError):
            pass  # the client went away or sent garbage: drop the connection
        finally:
            upstream.close()
            proxy._connection_closed(sock)
            try:
                reader.close()  # the socket closes only once its file is closed too
            except OSError:
                pass
            if outcome == "reset":  # close with SO_LINGER 0: the kernel sends RST
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
                    sock.close()
                except OSError:
                    pass

    def _one_request(self, proxy, sock, reader, upstream, number):
        """Serves one request: "next" to read another on this connection, "close" to
        close it, "reset" to reset it."""
        start, headers, raw = _read_head(reader)
        if start is None:
            return "close"
        proxy._flight(+1)
        try:
            return self._serve(proxy, sock, reader, upstream, number, start, headers, raw)
        finally:
            proxy._flight(-1)

    def _serve(self, proxy, sock, reader, upstream, number, start, headers, raw):
        parts = start.decode("latin-1").split()
        if len(parts) != 3:
            raise ProxyError(f"bad request line {start[:80]!r}")
        method, target, _ = parts
        expect = (_header(headers, "expect") or "").lower()
        if "100-continue" in expect:
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = _read_body(reader, headers)
        client_closes = _wants_close(start, headers)
        kind, cut = proxy._decide(number, method, target)

        if kind in ERROR_RESPONSES:  # answered here: the upstream never sees it
            sock.sendall(_error_response(kind, method, target, client_closes))
            return "close" if client_closes else "next"
        if kind == "drop_before":
            return "close"
        if kind == "reset":
            return "reset"

        forwarded = start + b"".join(
            line for line, (name, _) in zip(raw, headers) if name != "expect") + b"\r\n" + body
        status_line, response_headers, raw_headers, response_body, framed = upstream.exchange(
            forwarded, method)
        proxy._count_forwarded()
        if proxy.keep_alive:
            # The client's connection lives on whatever the upstream does with its own
            # (moto's server closes every one): its Connection header stays here, and an
            # answer framed by the end of its stream gets a Content-Length.
            raw_headers = [line for line, (name, _) in zip(raw_headers, response_headers)
                           if name not in ("connection", "keep-alive")]
            if not framed:
                raw_headers.append(f"Content-Length: {len(response_body)}\r\n".encode())
            upstream_closes = False
        else:
            upstream_closes = _wants_close(status_line, response_headers) or not framed
        head = status_line + b"".join(raw_headers) + b"\r\n"

        if kind == "drop_after_forward":
            return "close"
        if kind == "drop_mid":
            if len(response_body) >= 2:
                keep = 1 + int(cut * (len(response_body) - 1))
                sock.sendall(head + response_body[:min(keep, len(response_body) - 1)])
            else:  # inside the status code: a cut header block, or a status line cut
                # after its code, would pass for a whole answer
                sock.sendall(head[:max(1, int(cut * len(b"HTTP/1.1 20")))])
            return "close"
        if kind == "delay":
            time.sleep(proxy.delay_s)
        sock.sendall(head + response_body)
        return "close" if client_closes or upstream_closes else "next"


def _error_response(kind, method, target, close):
    status, reason, code, message = ERROR_RESPONSES[kind]
    request_id = f"FAULTPROXY{next(_error_ids):012d}"
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>{escape(message)}</Message>"
            f"<Resource>{escape(target.split('?', 1)[0])}</Resource>"
            f"<RequestId>{request_id}</RequestId><HostId>tessera-fault-proxy</HostId>"
            "</Error>").encode()
    head = (f"HTTP/1.1 {status} {reason}\r\n"
            "Content-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"x-amz-request-id: {request_id}\r\n"
            "Server: tessera-fault-proxy\r\n"
            + ("Connection: close\r\n" if close else "")
            + "\r\n").encode()
    return head if method == "HEAD" else head + body


# ---- the command line ------------------------------------------------------------------

def parse_rates(text):
    """"slowdown=0.05,reset=0.01" -> {"slowdown": 0.05, "reset": 0.01}."""
    rates = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        kind, equals, value = item.partition("=")
        if not equals:
            raise ValueError(f"fault rate {item!r}: expected KIND=PROBABILITY")
        rates[kind.strip()] = float(value)
    return rates


def filter_options(methods=None, match=None, pass_first=0):
    """FaultProxy's methods/match/pass_first from command-line text: methods "GET,PUT",
    match a regular expression or "chunks" (CHUNK_KEY)."""
    options = {"pass_first": pass_first}
    if methods:
        options["methods"] = [m.strip().upper() for m in methods.split(",") if m.strip()]
    if match:
        options["match"] = re.compile(CHUNK_KEY if match == "chunks" else match)
    return options


def main(argv=None):
    """Runs a proxy until stdin closes (or SIGTERM/SIGINT). Prints {"endpoint": ...} as its
    first line; then answers each line of stdin: "stats" with the counters as one JSON
    line, "reset" with the counters' JSON before restarting them. The last line it prints
    is the counters' JSON."""
    import argparse
    import json
    import signal
    import sys
    parser = argparse.ArgumentParser(prog="fault_proxy.py", description=main.__doc__)
    parser.add_argument("--upstream", required=True, help="http://host:port")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rates", default="", help="KIND=P,... of " + ", ".join(FAULT_KINDS))
    parser.add_argument("--delay-s", type=float, default=0.2)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--methods", default=None,
                        help="faults only on these methods, comma-separated (GET,PUT)")
    parser.add_argument("--match", default=None,
                        help="faults only on targets whose path this regular expression is "
                             "found in ('chunks': Zarr chunk keys)")
    parser.add_argument("--pass-first", type=int, default=0, metavar="N",
                        help="forward the first N requests that may get a fault untouched")
    args = parser.parse_args(argv)
    try:
        rates = parse_rates(args.rates)
        proxy = FaultProxy(args.upstream, seed=args.seed, rates=rates, delay_s=args.delay_s,
                           port=args.port, **filter_options(args.methods, args.match,
                                                            args.pass_first))
    except ValueError as error:
        parser.error(str(error))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with proxy:
        print(json.dumps({"endpoint": proxy.endpoint}), flush=True)
        try:
            for line in sys.stdin:
                command = line.strip()
                if command == "stats":
                    print(json.dumps(proxy.stats()), flush=True)
                elif command == "reset":
                    print(json.dumps(proxy.stats()), flush=True)
                    proxy.reset_counters()
                elif command:
                    print(json.dumps({"error": f"unknown command {command!r}"}), flush=True)
        except KeyboardInterrupt:
            pass
        finally:
            print(json.dumps(proxy.stats()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
