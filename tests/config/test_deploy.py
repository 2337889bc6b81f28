"""The deployment files (Dockerfile, docker-compose.yml, deploy/nginx.conf) make no assumption that
holds under one container engine only, and the image carries the runtime packages alone.

Read as text: no engine is needed to run these.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
NGINX_CONF = (REPO / "deploy" / "nginx.conf").read_text()

# DNS servers an engine puts in its containers' resolv.conf: Docker's embedded DNS, podman's
# aardvark-dns on its default networks, Kubernetes' usual kube-dns service addresses.
ENGINE_DNS = ("127.0.0.11", "10.88.0.1", "10.89.0.1", "10.96.0.10", "10.0.0.10", "10.43.0.10", "169.254.20.10")

# Commands every image here has: shell builtins, and what both Debian's essential packages and
# busybox (alpine) provide.
EVERYWHERE = {"sh", "exec", "test", "[", "true", "false", "echo", "printf", "kill", "exit", "cat", "grep", "hostname"}
# What each image adds. The app's own list is read from the Dockerfile and requirements.txt below.
IMAGE_TOOLS = {
    "nginx": {"nginx"},
    "postgres": {"pg_isready", "psql"},
    "redis": {"redis-cli"},
}
# Packages for tests and development only: they belong in requirements-dev.txt.
DEV_PACKAGE = re.compile(
    r"^(pytest(-.*)?|factory-boy|faker|playwright|ruff|schemathesis|hypothesis|coverage|mypy|"
    r"django-debug-toolbar|django-stubs|ipython|black|flake8|pre-commit)$"
)


def requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[\[=<>~!; ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def dockerfile_stage(name: str) -> str:
    match = re.search(rf"^FROM \S+ AS {name}\n(.*?)(?=^FROM |\Z)", DOCKERFILE, re.M | re.S)
    assert match, f"no stage {name} in the Dockerfile"
    return match.group(1)


def app_image_tools() -> set[str]:
    """Python, the console scripts of the runtime requirements that health checks use, and the Debian
    packages the runtime stage installs (their binaries carry the package's name here)."""
    tools = {"python", "python3"}
    runtime = requirement_names(REPO / "requirements.txt")
    tools |= {name for name in ("celery", "gunicorn") if name in runtime or f"{name}[redis]" in runtime}
    install = re.search(r"apt-get install -y --no-install-recommends ([^\\\n]+)", dockerfile_stage("runtime"))
    assert install, "the runtime stage installs no Debian packages?"
    tools |= set(install.group(1).split())
    if "ffmpeg" in tools:
        tools.add("ffprobe")
    return tools


def commands_of(test: list[str] | str) -> list[str]:
    """The programs a health check runs: the first word of each command of a CMD-SHELL line."""
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    kind, *args = test
    if kind == "CMD":
        return [args[0]]
    assert kind == "CMD-SHELL", test
    programs = []
    for part in re.split(r"\|\||&&|[|;]|\$\(|`", args[0]):
        # Quotes are dropped, not parsed: a "$(...)" inside them is split off above.
        words = re.sub(r"[()\"']", " ", part).split()
        words = [w for w in words if not re.match(r"^[A-Za-z_]\w*=", w)]  # VAR=value prefixes
        if words and words[0] not in {"!", "then", "else", "fi", "do", "done", "if"}:
            programs.append(words[0])
    return programs


def service_image(name: str, service: dict) -> str:
    if "build" in service:
        return service["build"].get("target", "app")
    image = service["image"].rsplit("/", 1)[-1].split(":", 1)[0]
    return image


def health_checks() -> list[tuple[str, str, list[str] | str]]:
    checks = []
    for name, service in COMPOSE["services"].items():
        check = service.get("healthcheck") or {}
        if check.get("test") and not check.get("disable"):
            checks.append((name, service_image(name, service), check["test"]))
    match = re.search(r"^HEALTHCHECK .*?CMD (\[.*?\])\s*$", dockerfile_stage("app"), re.M | re.S)
    assert match, "the app image has no HEALTHCHECK"
    checks.append(("Dockerfile app", "app", ["CMD", *yaml.safe_load(match.group(1))]))
    return checks


def test_no_engine_dns_address_is_hard_coded():
    files = {"Dockerfile": DOCKERFILE, "docker-compose.yml": yaml.safe_dump(COMPOSE), "nginx.conf": NGINX_CONF}
    for path, text in files.items():
        for address in ENGINE_DNS:
            assert address not in text, f"{path} names {address}, the DNS server of one engine only"
    # Any resolver address at all: the container's own resolv.conf names it (deploy/nginx-entrypoint.sh).
    for line in NGINX_CONF.splitlines():
        directive = line.split("#", 1)[0].strip()
        assert not directive.startswith("resolver "), f"nginx.conf hard-codes a resolver: {line.strip()}"


@pytest.mark.parametrize(("service", "image", "test"), health_checks(), ids=lambda v: v if isinstance(v, str) else "")
def test_health_checks_need_only_what_their_image_has(service, image, test):
    have = EVERYWHERE | (app_image_tools() if image == "app" else IMAGE_TOOLS[image])
    missing = [program for program in commands_of(test) if program not in have]
    assert missing == [], f"the {service} health check runs {missing}, which the {image} image may lack"
    # Some engines exec the check without the container's HOSTNAME variable.
    assert "HOSTNAME" not in str(test), f"the {service} health check reads $HOSTNAME"


def test_the_checker_sees_what_the_old_checks_needed():
    assert commands_of(["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1/nginx-healthz"]) == ["wget"]
    assert commands_of(["CMD-SHELL", 'celery -A config inspect ping -d "celery@$(hostname)" > /dev/null']) == [
        "celery",
        "hostname",
    ]
    assert commands_of(["CMD-SHELL", "redis-cli ping | grep -q PONG || curl -f x"]) == ["redis-cli", "grep", "curl"]


def test_runtime_requirements_hold_no_development_package():
    runtime = requirement_names(REPO / "requirements.txt")
    dev_file = REPO / "requirements-dev.txt"
    assert "-r requirements.txt" in dev_file.read_text().splitlines(), "the dev set must include requirements.txt"
    dev_only = requirement_names(dev_file)
    assert not runtime & dev_only, f"listed in both files: {sorted(runtime & dev_only)}"
    assert sorted(name for name in runtime if DEV_PACKAGE.match(name)) == []
    assert sorted(name for name in dev_only if not DEV_PACKAGE.match(name)) == [], (
        "requirements-dev.txt holds a package the checker above does not know as a tool: add it to DEV_PACKAGE"
    )


def test_the_image_installs_the_runtime_requirements_alone():
    builder = dockerfile_stage("builder")
    assert re.search(r"^COPY requirements\.txt ", builder, re.M)
    assert re.search(r"pip install -r /tmp/requirements\.txt$", builder, re.M)
    instructions = "\n".join(line for line in DOCKERFILE.splitlines() if not line.lstrip().startswith("#"))
    assert "requirements-dev" not in instructions
    # No `# syntax=` front end to fetch from a registry: the build works offline.
    assert not re.match(r"#\s*syntax\s*=", DOCKERFILE)


def test_nginx_entrypoint_writes_the_resolver_of_the_containers_resolv_conf(tmp_path):
    resolv_conf = tmp_path / "resolv.conf"
    # As podman writes it, with an IPv6 server and no newline at the end.
    resolv_conf.write_text("search dns.podman\nnameserver 10.89.0.1\noptions edns0\nnameserver fd00::53")
    out = tmp_path / "resolver.inc"
    env = {
        "PATH": "/usr/bin:/bin",
        "VIDQA_RESOLV_CONF": str(resolv_conf),
        "VIDQA_NGINX_RESOLVER_CONF": str(out),
        "NGINX_WEB_UPSTREAM": "web.vidqa.svc.cluster.local:8000",
    }
    result = subprocess.run(
        ["sh", str(REPO / "deploy" / "nginx-entrypoint.sh"), "echo", "started"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == "started\n"
    text = out.read_text()
    assert "resolver 10.89.0.1 [fd00::53] valid=10s ipv6=off;" in text
    assert "map $host $django_upstream { default http://web.vidqa.svc.cluster.local:8000; }" in text
    # The file nginx.conf includes is the one written.
    assert re.search(r"^include /etc/nginx/conf\.d/vidqa-resolver\.inc;", NGINX_CONF, re.M)
    assert re.search(r"^\s*proxy_pass \$django_upstream;", NGINX_CONF, re.M)

    resolv_conf.write_text("search example.com\n")
    result = subprocess.run(
        ["sh", str(REPO / "deploy" / "nginx-entrypoint.sh"), "true"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 78
    assert "names no nameserver" in result.stderr
