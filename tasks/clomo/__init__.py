"""CLoMo (Huang, Hong et al., ACL 2024): counterfactual logical modification and its SES.

``tasks.py`` holds the task, ``ses.py`` the Self-Evaluation Score, ``release.py`` the adapter to the
release's prompt files and SES code, ``prompts/`` eventkg's own templates and ``README.md`` the
family's page. Importing this package imports none of them.
"""
