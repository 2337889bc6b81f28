"""Statistics on the ground floor: pure functions over plain numbers (intervals, tests, sample sizes).

A plain package, not a Django app: it imports no app, so audits and evaluations compute their
figures with the same code and every number a page shows can be recomputed from its inputs.
"""
