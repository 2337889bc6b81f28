"""`make test`: start PostgreSQL and Redis on loopback, run pytest against them, stop them.

The Celery worker is started by the tests themselves (tests/conftest.py), once the test database
exists, so that it reads and writes the same database as the test.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.loopback_services import REPO, start_postgres, start_redis


def main(argv: list[str]) -> int:
    base = Path(tempfile.mkdtemp(prefix="vidqa-test-"))
    os.chmod(base, 0o755)  # noqa: S103 - the postgres user must reach its data folder inside
    services = []
    try:
        pg = start_postgres(base / "pg")
        services.append(pg)
        redis = start_redis(base / "redis")
        services.append(redis)
        print(f"harness: PostgreSQL at {pg.url}, Redis at {redis.url}", flush=True)
        env = {
            **os.environ,
            "DATABASE_URL": pg.url,
            "REDIS_URL": redis.url,
            "VIDQA_VAR_DIR": str(base / "var"),
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "VIDQA_TEST_TMP": str(base),
        }
        code = subprocess.call([sys.executable, "-m", "pytest", *argv], cwd=REPO, env=env)
        if code == 5:
            print("harness: pytest collected no tests; that is a failure here.", flush=True)
            return 1
        return code
    finally:
        for s in reversed(services):
            s.stop()
        if not os.environ.get("VIDQA_KEEP_TEST_TMP"):
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
