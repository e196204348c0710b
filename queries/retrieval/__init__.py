"""Retrieval for prompts: capped, ranked k-hop subgraphs around a text, and evaluation subgraphs
of questions with their scoring.
"""
