"""An independent reading of Table 1 of the EV² paper: regular expressions over one letter per relation.

The reference the induction code (``eventkg.queries.induction.table1``, ``induce``) is checked against;
it shares no code with it.
"""

from __future__ import annotations

import re

# --- an independent reading of Table 1: regular expressions over one letter per relation -----
LETTER = {"Causes": "C", "IsResult": "R", "Before": "B", "After": "A", "HasSubevent": "H", "IsSubevent": "S"}
TABLE_1 = [  # in the paper's row order; the first full match wins
    (r"B+", "Before"),
    (r"A+", "After"),
    (r"B*C+B*", "Before"),
    (r"A*R+A*", "After"),
    (r"B*H+B*", "Before"),
    (r"C*H+C*", "Causes"),
    (r"A*S+A*", "After"),
    (r"R*S+R*", "IsResult"),
]


def table1(seq: tuple[str, ...]) -> str | None:
    """Reference: a single edge is itself; otherwise the first Table 1 row that matches."""
    if len(seq) == 1:
        return seq[0]
    word = "".join(LETTER[r] for r in seq)
    return next((out for pattern, out in TABLE_1 if re.fullmatch(pattern, word)), None)
