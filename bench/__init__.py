"""Benchmarks that print each figure beside a floor measured in the same run.

Run from the repository root as ``python -m bench.<script>`` (``--help`` says what each measures);
what the scripts share lives in :mod:`bench.common`. Measured figures, with the command, date and
commit that give them, are in ``docs/performance.md`` and ``docs/scale.md``.
"""
