"""Exports of a store's graph: RDF, GraphML and lm-evaluation-harness rows, streamed.
"""
