"""One module per release format; `WRITERS` maps a ReleaseFormat value to its writer class."""

from .generic import GenericWriter
from .livibench import LiViBenchWriter
from .longvideobench import LongVideoBenchWriter
from .mvpbench import MVPBenchWriter
from .svbench import SVBenchWriter

WRITERS = {
    "svbench": SVBenchWriter,
    "longvideobench": LongVideoBenchWriter,
    "mvpbench": MVPBenchWriter,
    "livibench": LiViBenchWriter,
    "generic": GenericWriter,
}
