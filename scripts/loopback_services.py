"""Start throw-away PostgreSQL, Redis and Celery processes on loopback.

Used by the test harness and the benchmarks so that both run against real servers with nothing
set up by hand. Every process binds 127.0.0.1 on a free port and lives under one temporary folder.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Service:
    name: str
    url: str
    proc: subprocess.Popen
    log_path: Path
    extra: dict = field(default_factory=dict)

    def stop(self, timeout: float = 15) -> None:
        if self.proc.poll() is not None:
            return
        # Signal the whole process group: `runuser` (PostgreSQL as root) does not pass signals on.
        # SIGINT is PostgreSQL's "fast shutdown".
        self._signal(signal.SIGTERM if self.name != "postgres" else signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait(5)

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode} before it listened on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def _pg_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not candidates:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (Debian package: postgresql)")
    return candidates[-1]


def _as_postgres_user(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root; as root we hand it to the `postgres` system user.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def start_postgres(base: Path, db_name: str = "vidqa") -> Service:
    data = base / "pgdata"
    sock = base / "pgsock"
    for d in (data, sock):
        d.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        for d in (data, sock):
            shutil.chown(d, "postgres")
    log = base / "postgres.log"
    subprocess.run(
        _as_postgres_user(
            [_pg_bin("initdb"), "-D", str(data), "-U", "vidqa", "--auth=trust", "-E", "UTF8", "--no-sync"]
        ),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    port = free_port()
    cmd = _as_postgres_user(
        [
            _pg_bin("postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(sock),
            "-c",
            "listen_addresses=127.0.0.1",
            # Throw-away data: durability off, speed on.
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
            "-c",
            "shared_buffers=256MB",
        ]
    )
    log_file = open(log, "wb")  # noqa: SIM115 - the child process owns it until it exits
    if os.geteuid() == 0:
        shutil.chown(log, "postgres")
    proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for_port(port, proc, "PostgreSQL")
    url = f"postgres://vidqa@127.0.0.1:{port}"
    # The socket answers before the server accepts logins; retry the first query briefly.
    deadline = time.monotonic() + 30
    while True:
        r = subprocess.run(
            [_pg_bin("psql"), f"{url}/postgres", "-qAtc", f"CREATE DATABASE {db_name}"],
            capture_output=True,
            text=True,
        )
        if r.returncode == 0 or "already exists" in r.stderr:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL did not accept connections: {r.stderr}")
        time.sleep(0.2)
    return Service("postgres", f"{url}/{db_name}", proc, log, {"port": port, "base_url": url})


def start_redis(base: Path) -> Service:
    base.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("redis-server")
    if not exe:
        raise RuntimeError("redis-server is not installed (Debian package: redis-server)")
    port = free_port()
    log = base / "redis.log"
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(base)],
        stdout=open(log, "wb"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_for_port(port, proc, "Redis")
    return Service("redis", f"redis://127.0.0.1:{port}/0", proc, log, {"port": port})


def start_celery_worker(
    base: Path, env: dict[str, str], concurrency: int = 2, timeout: float = 60, beat: bool = False
) -> Service:
    """A real worker process; returns once it answers a ping. `beat`: with the periodic tasks inside."""
    base.mkdir(parents=True, exist_ok=True)
    log = base / "celery.log"
    full_env = {**os.environ, **env}
    beat_args = ["--beat", "--schedule-filename", str(base / "celerybeat-schedule")] if beat else []
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel",
            "INFO",
            "--pool",
            "prefork",
            "--concurrency",
            str(concurrency),
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"test-{os.getpid()}@%h",
            *beat_args,
        ],
        cwd=REPO,
        env=full_env,
        stdout=open(log, "wb"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    service = Service("celery", env.get("REDIS_URL", ""), proc, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Celery worker exited early:\n{service.log_tail()}")
        if "ready." in log.read_text(errors="replace"):
            return service
        time.sleep(0.2)
    service.stop()
    raise RuntimeError(f"the Celery worker did not start within {timeout:.0f} s:\n{service.log_tail()}")
