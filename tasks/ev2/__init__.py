"""EV² ("A Comprehensive Evaluation on Event Reasoning of Large Language Models", Tao et al.): CEC, CRR, alignment.

``tasks.py`` holds the CEC and CRR tasks, ``alignment.py`` the schema-alignment task,
``release.py`` the adapter to the release's prompt code, ``prompts/`` eventkg's own templates and
``README.md`` the family's page. Importing this package imports none of them: the registry names
the task classes and loads them when asked.
"""
