"""Relation-path induction: the EV² paper's Table 1 as an automaton, the paths it induces between
events, and the vetting of question candidates by it.
"""
