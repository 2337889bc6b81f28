import pytest

from tests.evaluations.world import build_release


@pytest.fixture
def release(tmp_path, settings):
    return build_release(tmp_path, settings)
