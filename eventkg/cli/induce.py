"""``eventkg induce``: the relation Table 1 of the EV² paper induces for a relation sequence.

Thin skin over :func:`eventkg.queries.induction.induce.induce`; reads no store.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer


def induce_cmd(
    relations: Annotated[str, typer.Argument(help="Comma-separated relations, e.g. Before,Causes,Before.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {relations, induced} as JSON.")] = False,
) -> None:
    """Print the relation Table 1 of the EV² paper induces for a relation sequence, or "none".

    Example:  eventkg induce Before,Causes,Before
    """
    from eventkg.queries.induction.induce import induce, parse_relations

    rels = parse_relations(relations)
    result = induce(rels)
    if as_json:
        print(json.dumps({"relations": rels, "induced": result}))
    else:
        print(result or "none")



def register(app: typer.Typer) -> None:
    """Add ``induce`` to the ``eventkg`` app."""
    app.command("induce")(induce_cmd)
