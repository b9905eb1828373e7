"""A LocalStack Lambda runtime executor that runs a function as a host process.

LocalStack's open-source build ships one executor, "docker": it pulls the
runtime image, downloads its init binary from GitHub and runs each execution
environment in a container. On a machine without Docker (or offline) none of
that works. This executor (LAMBDA_RUNTIME_EXECUTOR=host) runs the function's
`bootstrap` (runtimes provided.al2023 / provided.al2) directly on the host and
serves it the Lambda Runtime API itself, on 127.0.0.1:<free port>:

    GET  /2018-06-01/runtime/invocation/next            the next invocation
    POST /2018-06-01/runtime/invocation/<id>/response   its result
    POST /2018-06-01/runtime/invocation/<id>/error      its error
    POST /2018-06-01/runtime/init/error                 the process failed to start

One process is one execution environment and handles one invocation at a
time, as in Lambda; LocalStack starts more environments for concurrency. The
process gets the environment LocalStack computes (the function's variables,
the role's credentials, AWS_ENDPOINT_URL pointing at LocalStack) plus PATH and
AWS_LAMBDA_RUNTIME_API; nothing else of LocalStack's own environment. The
function's timeout is enforced here: at the deadline the process is killed
and started again for the next invocation, like Lambda's sandbox reset.

Differences from Lambda: no isolation (same user, same file system, the code
runs from LocalStack's unzipped copy), no memory limit, no Extensions or
Telemetry API; the REPORT line has no memory figures.
"""

import atexit
import json
import logging
import os
import platform
import queue
import stat
import subprocess
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

LOG = logging.getLogger(__name__)

RUNTIME_PREFIX = "/2018-06-01/runtime"
# How long a new process may take to ask for its first invocation.
STARTUP_TIMEOUT_S = 15
# Lines of process output kept for get_logs().
MAX_LOG_LINES = 2000
HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}.get(
    platform.machine().lower(), platform.machine().lower()
)

# Every process this plugin started, so that none outlives LocalStack.
_PROCESSES: set[subprocess.Popen] = set()
_PROCESSES_LOCK = threading.Lock()


@atexit.register
def _kill_all() -> None:
    with _PROCESSES_LOCK:
        procs = list(_PROCESSES)
    for p in procs:
        _kill(p)


def _kill(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.kill()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            LOG.warning("process %s did not exit after SIGKILL", p.pid)
    with _PROCESSES_LOCK:
        _PROCESSES.discard(p)


class _Invocation:
    def __init__(self, payload: dict, deadline_ms: int):
        self.request_id = payload["invoke-id"]
        self.payload = payload
        self.deadline_ms = deadline_ms
        self.result: Future = Future()  # (body bytes, is_error)


class _RuntimeAPI(ThreadingHTTPServer):
    """The Runtime API of one execution environment."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.waiting: queue.Queue = queue.Queue()  # invocations for GET /next
        self.current: _Invocation | None = None
        self.polled = threading.Event()  # the process asked for work
        self.init_error: bytes | None = None

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _RuntimeAPI

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        LOG.debug("runtime api %s: " + format, self.server.address, *args)

    def _reply(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != f"{RUNTIME_PREFIX}/invocation/next":
            return self._reply(404, b'{"errorMessage":"not found"}')
        self.server.polled.set()
        inv = self.server.waiting.get()
        if inv is None:  # shutting down
            return self._reply(500, b'{"errorMessage":"environment stopped"}')
        self.server.current = inv
        headers = {
            "Lambda-Runtime-Aws-Request-Id": inv.request_id,
            "Lambda-Runtime-Deadline-Ms": str(inv.deadline_ms),
            "Lambda-Runtime-Invoked-Function-Arn": inv.payload.get("invoked-function-arn", ""),
        }
        if inv.payload.get("trace-id"):
            headers["Lambda-Runtime-Trace-Id"] = inv.payload["trace-id"]
        body = inv.payload.get("payload") or ""
        self._reply(200, body.encode() if isinstance(body, str) else body, headers)

    def _body(self) -> bytes:
        # The Go runtime client streams its responses (chunked).
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()  # the CRLF after each chunk

    def do_POST(self):
        body = self._body()
        if self.path == f"{RUNTIME_PREFIX}/init/error":
            self.server.init_error = body or b'{"errorType":"Runtime.InitError"}'
            self.server.polled.set()
            return self._reply(202, b'{"status":"OK"}')
        prefix = f"{RUNTIME_PREFIX}/invocation/"
        if self.path.startswith(prefix):
            request_id, _, outcome = self.path[len(prefix) :].partition("/")
            inv = self.server.current
            if inv is None or inv.request_id != request_id or outcome not in ("response", "error"):
                return self._reply(400, b'{"errorMessage":"no such invocation"}')
            self.server.current = None
            if not inv.result.done():
                inv.result.set_result((body, outcome == "error"))
            return self._reply(202, b'{"status":"OK"}')
        self._reply(404, b'{"errorMessage":"not found"}')


class HostRuntimeExecutor(RuntimeExecutor):
    """One execution environment: one host process and its Runtime API."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id=id, function_version=function_version)
        self.api: _RuntimeAPI | None = None
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}
        self.lines: list[str] = []
        self.lines_lock = threading.Lock()
        self.name = function_version.id.function_name

    # LocalStack asks for the runtime endpoint while computing the
    # environment, before start().
    def _server(self) -> _RuntimeAPI:
        if self.api is None:
            self.api = _RuntimeAPI()
            threading.Thread(target=self.api.serve_forever, name=f"lambda-api-{self.id}", daemon=True).start()
        return self.api

    def _code_dir(self) -> str:
        return str(self.function_version.config.code.get_unzipped_code_location())

    def start(self, env_vars: dict[str, str]) -> None:
        api = self._server()
        self.env = {k: str(v) for k, v in env_vars.items()}
        self.env.update(
            AWS_LAMBDA_RUNTIME_API=api.address,
            LAMBDA_TASK_ROOT=self._code_dir(),
            PATH=os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        )
        self._spawn()

    def _spawn(self) -> None:
        api = self._server()
        api.polled.clear()
        api.init_error = None
        bootstrap = os.path.join(self._code_dir(), "bootstrap")
        self.proc = subprocess.Popen(
            [bootstrap],
            cwd=self._code_dir(),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        with _PROCESSES_LOCK:
            _PROCESSES.add(self.proc)
        threading.Thread(target=self._read_output, args=(self.proc,), name=f"lambda-out-{self.id}", daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not api.polled.wait(0.05):
            if self.proc.poll() is not None:
                raise LambdaRuntimeException(f"{self.name}: bootstrap exited with {self.proc.returncode} during init")
            if time.monotonic() > deadline:
                _kill(self.proc)
                raise LambdaRuntimeException(f"{self.name}: bootstrap did not ask for an invocation within {STARTUP_TIMEOUT_S}s")
        if api.init_error is not None:
            _kill(self.proc)
            raise LambdaRuntimeException(f"{self.name}: init error {api.init_error.decode(errors='replace')}")
        LOG.debug("%s: environment %s ready (pid %s, runtime api %s)", self.name, self.id, self.proc.pid, api.address)

    def _read_output(self, proc: subprocess.Popen) -> None:
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            with self.lines_lock:
                self.lines.append(line)
                if len(self.lines) > MAX_LOG_LINES:
                    del self.lines[: len(self.lines) - MAX_LOG_LINES]
            LOG.info("[%s %s] %s", self.name, self.id[:8], line)
        proc.stdout.close()

    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        request_id = payload["invoke-id"]
        if self.proc is None or self.proc.poll() is not None:
            # Killed at a timeout, or it crashed: a fresh process, as
            # Lambda resets the sandbox.
            self._spawn()
        timeout_s = float(self.function_version.config.timeout or 3)
        inv = _Invocation(payload, int((time.time() + timeout_s) * 1000))
        with self.lines_lock:
            first_line = len(self.lines)
        started = time.monotonic()
        self.api.waiting.put(inv)
        body, is_error = self._wait(inv, timeout_s)
        took_ms = (time.monotonic() - started) * 1000
        with self.lines_lock:
            lines = self.lines[first_line:]
        # The lines Lambda writes around each invocation (no memory figures).
        logs = "\n".join(
            [f"START RequestId: {request_id} Version: {self.function_version.id.qualifier}", *lines,
             f"END RequestId: {request_id}",
             f"REPORT RequestId: {request_id}\tDuration: {took_ms:.2f} ms\tBilled Duration: {max(1, round(took_ms))} ms"]
        )
        return InvocationResult(request_id=request_id, payload=body, is_error=is_error, logs=logs)

    def _wait(self, inv: _Invocation, timeout_s: float) -> tuple[bytes, bool]:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return inv.result.result(timeout=0.1)
            except FutureTimeout:
                pass
            if self.proc.poll() is not None:
                return _error("Runtime.ExitError", f"RequestId: {inv.request_id} Error: Runtime exited with error: exit status {self.proc.returncode}"), True
            if time.monotonic() > deadline:
                LOG.warning("%s: invocation %s timed out after %.2f seconds; restarting the process", self.name, inv.request_id, timeout_s)
                _kill(self.proc)
                return _error("Sandbox.Timedout", f"RequestId: {inv.request_id} Error: Task timed out after {timeout_s:.2f} seconds"), True

    def stop(self) -> None:
        if self.proc is not None:
            _kill(self.proc)
        if self.api is not None:
            self.api.waiting.put(None)
            self.api.shutdown()
            self.api.server_close()

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        # Where the function reaches LocalStack (AWS_ENDPOINT_URL): the host.
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return f"http://{self._server().address}"

    def get_logs(self) -> str:
        with self.lines_lock:
            return "\n".join(self.lines)

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        cfg = function_version.config
        if not str(cfg.runtime or "").startswith("provided"):
            raise LambdaRuntimeException(f"the host executor runs provided.* runtimes only, not {cfg.runtime}")
        arch = cfg.architectures[0] if cfg.architectures else "x86_64"
        if arch != HOST_ARCH:
            raise LambdaRuntimeException(f"function architecture {arch} cannot run on this {HOST_ARCH} host")
        cfg.code.prepare_for_execution()
        bootstrap = os.path.join(str(cfg.code.get_unzipped_code_location()), "bootstrap")
        if not os.path.isfile(bootstrap):
            raise LambdaRuntimeException(f"{function_version.id.function_name}: the code has no bootstrap file")
        os.chmod(bootstrap, os.stat(bootstrap).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"errorType": kind, "errorMessage": message}).encode()


class HostRuntimeExecutorPlugin(RuntimeExecutorPlugin):
    name = "host"

    def load(self, *args, **kwargs):
        return HostRuntimeExecutor
