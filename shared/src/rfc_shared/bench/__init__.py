"""Benchmarks: each case is an A/B pair measured side by side in one run.

Every measurement runs in a fresh interpreter, A and B interleaved
(A B A B ...), so that drift on the machine hits both sides alike. Results
are ratios, reported, never asserted in tests.
"""
