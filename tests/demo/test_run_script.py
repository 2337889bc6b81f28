"""`make run` (scripts/run.sh) end to end: the default set-up (SQLite, file-system broker), the printed
logins, a clean stop on Ctrl-C with no process left behind, and the failure paths.

These start the real script in a temporary VIDQA_VAR_DIR, so they need no database fixture; the
venv is already installed, so the bootstrap step inside the script has nothing to do.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from demo.storyboard import DEMO_LOGINS, PROJECT_SLUG
from scripts.loopback_services import REPO, free_port

# Generous upper bounds so a busy machine does not fail the test; a healthy start takes a fraction.
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 60
# What the harness sets for the rest of the suite must not leak in: `make run` uses its defaults.
_NOT_INHERITED = {
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_MEDIA_ROOT",
    "DJANGO_STATIC_ROOT",
    "DJANGO_DEBUG",
    "DJANGO_SETTINGS_MODULE",
    "PORT",
    "VIDQA_VAR_DIR",
}


class RunScript:
    """scripts/run.sh in its own session, with its output collected as it comes."""

    def __init__(self, *, port: int, var_dir: Path, command: tuple[str, ...] = ("bash", "scripts/run.sh")):
        env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
        env.update(PORT=str(port), VIDQA_VAR_DIR=str(var_dir))
        # make passes its own settings to the script through these; the test's make is not our make.
        for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(name, None)
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            list(command),
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._seen: list[tuple[int, str]] = []  # (pid, start time) of every process it started

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "".join(self._lines)

    def wait_for(self, text: str, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while text not in "".join(self._lines):
                if self.proc.poll() is not None and not self._reader.is_alive():
                    pytest.fail(f"run.sh exited with {self.proc.returncode} before printing {text!r}:\n{self.output}")
                if time.monotonic() > deadline:
                    pytest.fail(f"run.sh did not print {text!r} within {timeout:.0f} s:\n{''.join(self._lines)}")
                self._changed.wait(0.5)

    def remember_processes(self) -> list[tuple[int, str]]:
        self._seen = _descendants(self.proc.pid)
        return self._seen

    def wait_exit(self, timeout: float = STOP_TIMEOUT_S) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            alive = [(pid, _cmdline(pid)) for pid, _ in _descendants(self.proc.pid)]
            pytest.fail(f"run.sh did not exit within {timeout:.0f} s; still running: {alive}\n{self.output}")
        self._reader.join(10)
        return code

    def kill_everything(self) -> None:
        """Last resort so a failing test leaves no server behind (only processes this run started)."""
        running = _descendants(self.proc.pid) if self.proc.poll() is None else []
        for pid, start in [*self._seen, *running]:
            if _alive(pid, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, start time) from /proc, or None when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], fields[19]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def _descendants(root: int) -> list[tuple[int, str]]:
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))):
            children.setdefault(st[0], []).append(int(entry))
            starts[int(entry)] = st[2]
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append((child, starts[child]))
            todo.append(child)
    return found


def _alive(pid: int, start: str) -> bool:
    st = _stat(pid)
    # A zombie has finished; a different start time means the pid was reused by someone else.
    return st is not None and st[1] != "Z" and st[2] == start


def _wait_for_log(path: Path, pattern: re.Pattern, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and pattern.search(path.read_text(errors="replace")):
            return
        time.sleep(0.5)
    tail = path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"
    pytest.fail(f"{path.name} did not show {pattern.pattern!r} within {timeout:.0f} s:\n{tail}")


def _get(opener, url: str, data: dict | None = None) -> tuple[int, str]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    try:
        with opener.open(url, data=body, timeout=30) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def var_dir(tmp_path_factory):
    # Shared by this module's runs: the first builds the database and the demo, later runs reuse them
    # (which is also what a second `make run` does).
    return tmp_path_factory.mktemp("run-var")


def test_make_run_serves_the_demo_with_printed_logins_and_ctrl_c_stops_everything(var_dir):
    run = RunScript(port=free_port(), var_dir=var_dir)
    try:
        run.wait_for("Press Ctrl-C")
        out = run.output
        assert f"{run.base_url}/" in out
        for username, password, _ in DEMO_LOGINS:
            assert re.search(rf"\|\s+{username}\s+/\s+{re.escape(password)}\s", out), f"login {username} not printed"

        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar := CookieJar()), _NoRedirect)
        assert _get(opener, f"{run.base_url}/healthz") == (200, "ok")
        status, _ = _get(opener, f"{run.base_url}/accounts/login/")
        assert status == 200
        # The printed login works: the login form accepts it and the demo project opens.
        token = next((c.value for c in jar if c.name == "csrftoken"), None)
        assert token, "the login page set no CSRF cookie"
        username, password, _ = DEMO_LOGINS[1]
        status, _ = _get(
            opener,
            f"{run.base_url}/accounts/login/",
            {"username": username, "password": password, "csrfmiddlewaretoken": token},
        )
        assert status == 302, "the printed annotator login was refused"
        assert _get(opener, f"{run.base_url}/p/{PROJECT_SLUG}/")[0] == 200

        # Beat runs inside the worker: the lapsed-lease sweep is sent at start (then every minute) and run.
        _wait_for_log(var_dir / "log" / "worker.log", re.compile(r"Task reviewer\.expire_leases\[[^\]]+\] succeeded"))
        assert list(var_dir.glob("celerybeat-schedule*")), "beat kept no schedule file in the var folder"

        processes = run.remember_processes()
        commands = [_cmdline(pid) for pid, _ in processes]
        assert any("celery" in c and " worker" in c and " -B" in c for c in commands), commands
        assert any("runserver" in c for c in commands), commands

        run.proc.send_signal(signal.SIGINT)
        code = run.wait_exit()
        assert code == 130
        assert "stopped." in run.output
        survivors = [(pid, _cmdline(pid)) for pid, start in processes if _alive(pid, start)]
        assert survivors == [], f"left running after Ctrl-C: {survivors}"
        assert _port_is_free(run.port)
    finally:
        run.kill_everything()


def test_make_run_stops_the_web_server_and_fails_when_the_worker_dies(var_dir):
    run = RunScript(port=free_port(), var_dir=var_dir)
    try:
        run.wait_for("Press Ctrl-C")
        processes = run.remember_processes()
        worker = next(
            pid for pid, _ in processes if "celery" in _cmdline(pid) and _stat(pid) and _stat(pid)[0] == run.proc.pid
        )
        os.kill(worker, signal.SIGKILL)

        code = run.wait_exit()
        assert code == 1
        assert "the worker stopped unexpectedly" in run.output
        assert "celery@" in run.output.split("the worker stopped unexpectedly", 1)[1], "no worker log tail printed"
        survivors = [(pid, _cmdline(pid)) for pid, start in processes if _alive(pid, start)]
        assert survivors == [], f"left running after the worker died: {survivors}"
    finally:
        run.kill_everything()


def test_make_run_says_so_when_the_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = RunScript(port=port, var_dir=tmp_path / "var")
        try:
            code = run.wait_exit(START_TIMEOUT_S)
        finally:
            run.kill_everything()
    assert code == 1
    assert f"port {port} on 127.0.0.1 is already in use" in run.output
    # It stops before touching anything: no database was made.
    assert not (tmp_path / "var" / "db.sqlite3").exists()


def _processes_started_with(var_dir: Path) -> list[tuple[int, str]]:
    """Every live process whose environment names this VIDQA_VAR_DIR: all a run started, wherever it
    was reparented to, including one that was started after the last look at the process tree."""
    marker = f"\0VIDQA_VAR_DIR={var_dir}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        st = _stat(int(entry))
        if marker in b"\0" + environ + b"\0" and st and st[1] != "Z":
            found.append((int(entry), _cmdline(int(entry))))
    return found


def _assert_nothing_left(var_dir: Path, output: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while (left := _processes_started_with(var_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], f"left running: {left}\n{output}"


@pytest.mark.parametrize(
    ("moment", "sig"),
    [
        # Just after the worker was started, before either process is ready.
        pytest.param("run: starting the web server", signal.SIGTERM, id="sigterm-twice-starting"),
        pytest.param("Press Ctrl-C", signal.SIGTERM, id="sigterm-twice-serving"),
    ],
)
def test_make_run_stops_everything_it_started_when_signalled_twice(var_dir, moment, sig):
    """As `kill -TERM -<pgid>` of `make run`, twice (make forwards a SIGTERM of its own as well): the
    signals that land during the clean-up must not end it before the web server and the worker,
    each in its own session, are gone."""
    run = RunScript(port=free_port(), var_dir=var_dir, command=("make", "--no-print-directory", "run"))
    try:
        run.wait_for(moment)
        os.killpg(run.proc.pid, sig)
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.proc.pid, sig)
        run.wait_exit()
        assert "run: stopped." in run.output
        # The script ended by its own exit status, not killed by a signal half-way (make reports how
        # its recipe ended; its own wording may vary when signals reach make mid-way).
        assert not re.search(r"\] (Terminated|Interrupt|Killed)$", run.output, re.M), run.output
        _assert_nothing_left(var_dir, run.output)
        assert _port_is_free(run.port)
    finally:
        run.kill_everything()
        for pid, _ in _processes_started_with(var_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_ctrl_c_twice_stops_everything_and_the_second_shortens_the_workers_grace_period(var_dir):
    """Ctrl-C pressed again while the script waits for the worker: it still stops everything, only
    sooner."""
    run = RunScript(port=free_port(), var_dir=var_dir, command=("make", "--no-print-directory", "run"))
    try:
        run.wait_for("Press Ctrl-C")
        processes = run.remember_processes()
        # A worker that cannot stop by itself (as one deep in a long task): stopped, it would only go
        # at the end of its 20 s grace period.
        worker = next(
            pid for pid, _ in processes if "celery" in _cmdline(pid) and "scripts/run.sh" in _cmdline(_stat(pid)[0])
        )
        os.kill(worker, signal.SIGSTOP)
        os.killpg(run.proc.pid, signal.SIGINT)
        run.wait_for("stopping the web server and the worker", timeout=10)
        time.sleep(1)
        started = time.monotonic()
        os.killpg(run.proc.pid, signal.SIGINT)
        run.wait_exit()
        assert time.monotonic() - started < 10, run.output
        assert "run: stopped." in run.output
        assert not re.search(r"\] (Interrupt|Killed)$", run.output, re.M), run.output
        assert "stopping faster" in run.output
        assert "the worker did not stop in time; killing it" in run.output
        _assert_nothing_left(var_dir, run.output)
    finally:
        run.kill_everything()
        for pid, _ in _processes_started_with(var_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
