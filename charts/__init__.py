"""Drawing on the ground floor: pure functions that turn numbers into pictures (SVG charts).

A plain package, not a Django app: it imports no app, so any app may draw with it and the
template tag that puts a chart on a page (studio's `chart_svg`) stays in the interface layer.
"""
