"""Shortcut audit of EV²-format CEC and CRR files: what a model could score without the reasoning.

:func:`~eventkg.queries.audit.report.audit_files` is the entry point (``eventkg audit``):
``items`` reads a file into questions, ``checks`` runs the baselines that never see the
reasoning (answer position, choice-only and form-only classifiers, overlap, sentence-model
similarity, the in-file and store graph, CRR's label prior, duplicates), ``report`` gathers
them per file as JSON, a table and a plot.
"""
