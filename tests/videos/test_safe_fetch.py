"""Manifest URLs: never the server's own networks, unless a setting allows them; plain failure messages."""

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests import factories
from videos.manifest import ManifestRow, import_rows
from videos.models import Video
from videos.safe_fetch import address_allowed
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


@pytest.fixture(scope="module")
def video_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("fetch") / "a.mp4"
    make_scene_video(path, [SceneSpec(1.0)], width=160, height=90)
    return Path(path).read_bytes()


@pytest.fixture
def server(video_bytes):
    """A loopback web server: /a.mp4 is a video, /to-loopback redirects to 127.0.0.1."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            hits.append(self.path)
            if self.path == "/to-loopback":
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/a.mp4")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(video_bytes)))
            self.end_headers()
            self.wfile.write(video_bytes)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    httpd.hits = hits
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _import(url: str):
    project = factories.ProjectFactory()
    result = import_rows(project=project, rows=[ManifestRow(1, url, {})])
    return project, result.outcomes[0]


def test_an_allow_listed_network_is_fetched(server, settings):
    settings.VIDQA_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    project, outcome = _import(f"http://127.0.0.1:{server.server_port}/a.mp4")
    assert outcome.ok, outcome.message
    assert Video.objects.get(project=project).name == "a"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/a.mp4",
        "http://localhost:{port}/a.mp4",
        "http://[::1]:{port}/a.mp4",
        "http://10.1.2.3/a.mp4",
        "http://192.168.0.10:6379/a.mp4",
        "http://169.254.169.254/latest/meta-data/",
    ],
)
def test_local_and_private_addresses_are_refused_without_connecting(server, url):
    url = url.format(port=server.server_port)
    project, outcome = _import(url)
    assert not outcome.ok
    assert outcome.message == (
        f"{url}: refused; it points at a local or private network address this server does not fetch from."
    )
    assert server.hits == [] and not Video.objects.filter(project=project).exists()


def test_a_redirect_to_loopback_is_refused(server, settings):
    settings.VIDQA_FETCH_ALLOWED_HOSTS = ["localhost"]  # the first hop is allowed, its redirect target is not
    url = f"http://localhost:{server.server_port}/to-loopback"
    project, outcome = _import(url)
    assert not outcome.ok and "refused" in outcome.message
    assert server.hits == ["/to-loopback"]
    assert not Video.objects.filter(project=project).exists()


def test_a_closed_port_says_could_not_fetch_and_nothing_more(settings):
    settings.VIDQA_FETCH_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    url = "http://127.0.0.1:9/a.mp4"  # discard port: nothing listens
    _, outcome = _import(url)
    assert outcome.message == f"{url}: could not fetch."


@pytest.mark.parametrize(
    "address, allowed",
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("0.0.0.0", False),  # noqa: S104 - an address to judge, not to bind
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("100.64.0.1", False),
        ("169.254.169.254", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:7f00:1::", False),  # 6to4 for 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 for 10.0.0.1
    ],
)
def test_address_policy(address, allowed):
    assert address_allowed(ipaddress.ip_address(address)) is allowed


def test_allow_list_settings(settings):
    settings.VIDQA_FETCH_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    settings.VIDQA_FETCH_ALLOWED_HOSTS = ["minio.lab.internal"]
    assert address_allowed(ipaddress.ip_address("10.20.3.4"))
    assert not address_allowed(ipaddress.ip_address("10.21.3.4"))
    assert address_allowed(ipaddress.ip_address("10.99.0.1"), host="MinIO.lab.internal.")


def test_the_checked_address_is_the_one_connected_to(monkeypatch, tmp_path):
    """A second DNS answer (rebinding to loopback) is never asked for: the connection uses the first."""
    import socket

    from videos import safe_fetch

    answers = iter(["93.184.216.34", "127.0.0.1"])
    lookups, connections = [], []

    def getaddrinfo(host, port, *args, **kwargs):
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    def create_connection(address, *args, **kwargs):
        connections.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(safe_fetch.socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(safe_fetch.socket, "create_connection", create_connection)
    with pytest.raises(safe_fetch.FetchError) as caught:
        safe_fetch.fetch_to_file("http://rebind.example/a.mp4", tmp_path / "a.mp4", max_bytes=1000)
    assert lookups == ["rebind.example"] and connections == [("93.184.216.34", 80)]
    assert str(caught.value) == "http://rebind.example/a.mp4: could not fetch."  # not "refused" on port 80
