"""A failed model call in plain words: what went wrong, without the stack's vocabulary.

The LLM layer's error texts (and the socket errors inside them) name the failure precisely but not
plainly ("[Errno -2] Name or service not known"). `failure_in_words` maps the failures people meet
(the address cannot be found, the connection is refused, no answer in time, the key refused, rate
limits, server errors) to one sentence; the raw text stays available for a disclosure.
"""

import re

from django.utils.translation import gettext as _

_CONNECTION_KINDS = ("dns", "refused", "timeout", "connection")

# (kind, pattern), first match wins; patterns read the texts that openai/httpx/socket produce.
_PATTERNS = [
    ("no_endpoint", re.compile(r"no model endpoint is set", re.I)),
    (
        "dns",
        re.compile(
            r"name or service not known|nodename nor servname|temporary failure in name resolution|"
            r"getaddrinfo failed|no address associated with hostname|errno -[235]\b",
            re.I,
        ),
    ),
    ("refused", re.compile(r"connection refused|errno 111\b|actively refused", re.I)),
    ("auth", re.compile(r"\b(HTTP|status|error code:?) ?401\b|invalid api key|incorrect api key", re.I)),
    ("forbidden", re.compile(r"\b(HTTP|status|error code:?) ?403\b", re.I)),
    ("not_found", re.compile(r"\b(HTTP|status|error code:?) ?404\b", re.I)),
    ("rate", re.compile(r"\b(HTTP|status|error code:?) ?429\b|rate limited|out of quota", re.I)),
    ("server", re.compile(r"\b(HTTP|status|error code:?) ?5\d\d\b", re.I)),
    ("timeout", re.compile(r"timed out|no answer within|timeout", re.I)),
    ("connection", re.compile(r"connection (failed|error|reset|aborted)|remote end closed|disconnected", re.I)),
]


def failure_kind(text: str) -> str | None:
    """A short name for a known kind of failure in this error text, or None."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text or ""):
            return kind
    return None


def _connection_reason(kind: str) -> str:
    return {
        "dns": _("the server's name could not be found (check the base URL)"),
        "refused": _("the server refused the connection"),
        "timeout": _("the server did not answer in time"),
        "connection": _("the connection broke off"),
    }[kind]


def failure_in_words(text: str, *, url: str = "") -> str | None:
    """One plain sentence for a known model-call failure, or None when the text is not one we know.

    `url` names the endpoint in connection failures; without it the sentence says "the model endpoint".
    """
    kind = failure_kind(text)
    if kind is None or kind == "no_endpoint":
        return None  # unknown, or already a plain sentence
    if kind in _CONNECTION_KINDS:
        return _("Could not connect to %(where)s: %(reason)s.") % {
            "where": url or _("the model endpoint"),
            "reason": _connection_reason(kind),
        }
    if kind == "auth":
        return _("The key was refused (401): a project admin can set a new one under Settings → Model endpoint.")
    if kind == "forbidden":
        return _("The key is not allowed to use this model or endpoint (403).")
    if kind == "not_found":
        return _("The endpoint does not know this model or address (404): check the model names and base URL.")
    if kind == "rate":
        return _("The endpoint is rate limiting this key, or its quota is used up (429): try again later.")
    return _("The model endpoint had a server error (5xx): try again later.")
