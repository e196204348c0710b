"""What several test modules share: paths, the Neo4j server fixture, bad-day inputs, small graphs.

Test modules import helpers from here, never from one another.
"""
