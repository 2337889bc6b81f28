"""Swagger UI and ReDoc over the schema, each under the policy its vendored bundle needs.

Neither page runs an inline script: Swagger UI takes its start-up script from a second request to
the same view (`?script`, drf-spectacular's split view), and ReDoc starts from its <redoc> element.
What they do need beyond the site's policy is styles set from script (React and styled-components
write <style> elements), images as data: URLs (their icons), and, for ReDoc, a Worker built from a
blob: URL (its search index).
"""

from csp.decorators import csp_update
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

DOCS_POLICY = {
    "style-src": ["'unsafe-inline'"],
    "img-src": ["data:"],
    "worker-src": ["blob:"],
}

swagger_ui = csp_update(DOCS_POLICY)(
    SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html")
)
redoc = csp_update(DOCS_POLICY)(SpectacularRedocView.as_view(url_name="api:schema", template_name="api/redoc.html"))
