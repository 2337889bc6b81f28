"""Helpers of tests/test_permission_matrix.py: the URL resolver walk and the two-project world."""
