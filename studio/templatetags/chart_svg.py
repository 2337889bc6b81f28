"""`{% svg_chart chart "id" %}`: draw a charts.svg.Chart inline (see charts/svg.py)."""

from django import template
from django.utils.safestring import mark_safe

from charts.svg import render_svg

register = template.Library()


@register.simple_tag
def svg_chart(chart, chart_id: str = "chart"):
    # render_svg escapes every text and attribute it writes.
    return mark_safe(render_svg(chart, chart_id))  # noqa: S308
