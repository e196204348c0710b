"""AbsPyramid (Wang et al. 2023): abstraction detection and generation.

``tasks.py`` holds the two tasks, ``release.py`` the adapter to the release's generation templates,
``prompts/`` eventkg's own templates and ``README.md`` the family's page. Importing this package
imports none of them.
"""
