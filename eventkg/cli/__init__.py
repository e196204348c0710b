"""The ``eventkg`` command line: a thin skin over the library, one module per command group.

``app`` owns the global options and error handling; ``shared`` the per-invocation state, the
consoles and the progress bar every command uses; each other module registers its commands.
"""

from eventkg.cli.app import app, main

__all__ = ["app", "main"]
