"""A form with no fields is a request without a body, for operations that read JSON.

`curl -X POST`, a browser's bare `fetch(url, {method: "POST"})` with a form type, or a test
client's `post(url)` send an empty form; that means "no input" and the JSON defaults apply. A
form with fields is refused (415): forms cannot carry the types the schema documents. These
parsers are left out of the schema (api.schema), which documents JSON only.
"""

from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.parsers import FormParser, MultiPartParser


class _EmptyOnly:
    undocumented = True

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        data, files = (parsed.data, parsed.files) if hasattr(parsed, "files") else (parsed, {})
        if data or files:
            raise UnsupportedMediaType(media_type)
        return {}


class EmptyMultiPartParser(_EmptyOnly, MultiPartParser):
    pass


class EmptyFormParser(_EmptyOnly, FormParser):
    pass
