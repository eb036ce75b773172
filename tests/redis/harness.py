"""Test harness for bloomkit.so: starts redis-server with the module on a
free loopback port in its own temporary directory, talks raw RESP to it,
and stops every server it started by PID -- on success, failure, an
exception or a signal.

A test script calls `main(test_function)`; the module path is argv[1].
"""
import atexit
import codecs
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

MODULE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
_servers = []


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now, whose cluster
    bus port (port + 10000) is free too."""
    rng = random.SystemRandom()
    while True:
        port = rng.randrange(20000, 50000)
        if _bindable(port) and _bindable(port + 10000):
            return port


class Server:
    """One redis-server process with bloomkit.so loaded."""

    def __init__(self, *extra, module_args=(), directory=None, port=None):
        self.port = port or free_port()
        self.dir = directory or tempfile.mkdtemp(prefix="bkredis-")
        self.extra = list(extra)
        self.module_args = list(module_args)
        self.proc = None
        self.start()

    def start(self):
        args = [SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--appendonly", "no", "--logfile", "server.log",
                "--enable-debug-command", "yes", "--protected-mode", "no",
                "--loadmodule", MODULE] + self.module_args + self.extra
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _servers.append(self)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with Client(self.port) as c:
                    if c.call("PING") == b"+PONG\r\n":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited: " + self.log())
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer on port %d" % self.port)

    def log(self):
        try:
            with open(os.path.join(self.dir, "server.log")) as f:
                return f.read()[-int(os.environ.get("BK_LOG_TAIL", "3000")):]
        except OSError:
            return "(no log)"

    def client(self):
        return Client(self.port)

    def stop(self, save=False):
        """Stops the server (SHUTDOWN [NO]SAVE, then SIGKILL by PID)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            with Client(self.port) as c:
                c.send("SHUTDOWN", "SAVE" if save else "NOSAVE")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def restart(self, *extra):
        self.stop(save=False)
        if extra:
            self.extra = list(extra)
        self.start()


def _stop_all(*_):
    for s in _servers:
        if s.proc is not None and s.proc.poll() is None:
            try:
                os.kill(s.proc.pid, signal.SIGKILL)
                s.proc.wait()
            except OSError:
                pass
    for s in _servers:
        shutil.rmtree(s.dir, ignore_errors=True)


atexit.register(_stop_all)
for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, lambda *a: (_stop_all(), os._exit(1)))


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Client:
    """A raw RESP client: call() returns the reply's exact bytes."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.sock.close()

    def send(self, *args):
        self.sock.sendall(encode(*args))

    def _line(self, pos):
        while True:
            end = self.buf.find(b"\r\n", pos)
            if end >= 0:
                return end
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise OSError("connection closed")
            self.buf += chunk

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise OSError("connection closed")
            self.buf += chunk

    def _skip(self, pos):
        """Position just after the reply starting at pos."""
        end = self._line(pos)
        kind, head = self.buf[pos:pos + 1], self.buf[pos + 1:end]
        pos = end + 2
        if kind in b"$=!" and head != b"-1":
            self._need(pos + int(head) + 2)
            return pos + int(head) + 2
        if kind in b"*~>" and head != b"-1":
            for _ in range(int(head)):
                pos = self._skip(pos)
        elif kind == b"%" or kind == b"|":
            for _ in range(2 * int(head)):
                pos = self._skip(pos)
        return pos

    def read_raw(self):
        end = self._skip(0)
        raw, self.buf = self.buf[:end], self.buf[end:]
        return raw

    def call(self, *args):
        self.send(*args)
        return self.read_raw()

    def value(self, *args):
        """The reply decoded (parse())."""
        return parse(self.call(*args))

    def pipeline(self, commands):
        self.sock.sendall(b"".join(encode(*c) for c in commands))
        return [self.read_raw() for _ in commands]


class Error(str):
    pass


def parse(raw):
    """A reply's bytes as Python values: ints, bytes, lists, dicts, None,
    True/False, Error strings."""
    value, _ = _parse(raw, 0)
    return value


def _parse(raw, pos):
    end = raw.index(b"\r\n", pos)
    kind, head = raw[pos:pos + 1], raw[pos + 1:end]
    pos = end + 2
    if kind == b"+":
        return head.decode(), pos
    if kind == b"-":
        return Error(head.decode()), pos
    if kind == b":":
        return int(head), pos
    if kind == b",":
        return float(head), pos
    if kind == b"#":
        return head == b"t", pos
    if kind == b"_":
        return None, pos
    if kind in b"$=":
        if head == b"-1":
            return None, pos
        n = int(head)
        return raw[pos:pos + n], pos + n + 2
    if kind in b"*~":
        if head == b"-1":
            return None, pos
        items = []
        for _ in range(int(head)):
            item, pos = _parse(raw, pos)
            items.append(item)
        return items, pos
    if kind == b"%":
        d = {}
        for _ in range(int(head)):
            k, pos = _parse(raw, pos)
            v, pos = _parse(raw, pos)
            d[k] = v
        return d, pos
    raise ValueError("unknown reply type %r" % kind)


def unescape(text):
    """The bytes a reference file's `raw:` line shows (Python escapes)."""
    return codecs.escape_decode(text.encode())[0]


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main(test):
    if MODULE is None or not os.path.exists(MODULE):
        print("usage: %s path/to/bloomkit.so" % sys.argv[0])
        sys.exit(2)
    try:
        test()
    except Exception:
        for s in _servers:
            print("---- server on port %d ----\n%s" % (s.port, s.log()))
        raise
    finally:
        _stop_all()
    print("PASS")
