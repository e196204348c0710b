"""Shared CLI plumbing: parsing ``--param NAME=VALUE``, printing query rows, and the one error printer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from eventkg.errors import UsageError


def parse_params(pairs: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs -> dict; a VALUE that parses as JSON (1, true, [..]) is typed."""
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--param {pair!r}: expected NAME=VALUE")
        try:
            params[name] = json.loads(value)
        except json.JSONDecodeError:
            params[name] = value
    return params


def print_rows(console: Console, rows: list[dict[str, Any]], as_json: bool, hide: Sequence[str] = ()) -> None:
    """Rows as JSON (a list of objects keyed by the RETURN names) or as a rich table."""
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        console.print("(no rows)")
        return
    table = Table()
    cols = [c for c in rows[0] if c not in hide]
    for col in cols:
        table.add_column(col)
    for row in rows:
        table.add_row(*(v if isinstance(v, str) else json.dumps(v, default=str) for v in (row[c] for c in cols)))
    console.print(table)


def print_error(message: str, console: Console) -> None:
    """``error: MESSAGE`` on ``console`` (stderr) as one line of plain text: the message is never read as markup
    (a path holding ``[/x]`` or ``[bold]`` is printed as given) and its line breaks become spaces."""
    line = " ".join(message.split()) or "unknown error"
    console.print(Text.assemble(("error:", "red"), " ", line), highlight=False, soft_wrap=True)

