"""Side-by-side benchmarks of dovecote, two hand-written baselines and the Python peers.

Run ``python -m benchmarks --help``. Every (runtime, workload, loop) cell runs in a fresh
subprocess (``python -m benchmarks.cell``); see ``docs/benchmarks.md``.
"""
