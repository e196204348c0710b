"""One audit per file: the checks of :mod:`~eventkg.queries.audit.checks` gathered, as JSON, a rich table and a plot."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.queries.audit.checks import Finding, Similarity, StoreView, cec_checks, crr_checks
from eventkg.queries.audit.items import Item, read_items
from eventkg.queries.errors import AuditError

if TYPE_CHECKING:  # the graph modules are imported when a graph is read
    from eventkg.graphstore.base import GraphStore
    from eventkg.queries.graph.event_graph import EventGraph


@dataclass
class FileAudit:
    """The findings on one file."""

    path: str
    task: str
    level: str
    n: int
    findings: list[Finding]

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.findings)

    def failed(self) -> list[str]:
        return [f.check for f in self.findings if not f.passed]

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "task": self.task, "level": self.level, "n": self.n, "passed": self.passed,
                "findings": [f.as_dict() for f in self.findings]}

    def score(self, check: str) -> float:
        return next(f.score for f in self.findings if f.check == check)


def audit_items(items: list[Item], *, path: str = "", seed: int = 0, similarity: Similarity | None = None,
                store: StoreView | None = None) -> FileAudit:
    """The audit of questions already read (one task and level).

    Args:
        items: the questions (:func:`~eventkg.queries.audit.items.read_items`).
        path: the name the audit reports them under.
        seed: seeds the cross-validation folds.
        similarity: the sentence model's similarity (None: the similarity checks are left out).
        store: degree and frequency of the events in a store's graph (None: left out).

    Returns:
        A :class:`FileAudit`.
    """
    for i, it in enumerate(items):
        it.index = i
    run = cec_checks if items[0].task == "CEC" else crr_checks
    return FileAudit(path, items[0].task, items[0].level, len(items), run(items, seed, similarity, store))


def audit_files(paths: list[str | Path], *, store: GraphStore | EventGraph | None = None,
                embed_model: str | None = None, similarity: bool = True, seed: int = 0) -> list[FileAudit]:
    """Audit EV²-format CEC/CRR files for shortcuts (``eventkg audit``).

    Args:
        paths: JSON-lines files, each one task and level (the release's or eventkg's).
        store: an open store or a graph already read (its degree and frequency of gold against
            negatives are checked); None: the store checks are left out.
        embed_model: the sentence-embedding model (None: the configured one, the bundled all-MiniLM-L6-v2).
        similarity: False leaves out the sentence-model checks (no model loaded).
        seed: seeds the cross-validation folds.

    Returns:
        One :class:`FileAudit` per file, in order.

    Raises:
        AuditError: a file cannot be read (file:line: reason), or holds fewer than 2 questions.
    """
    read = [(str(p), read_items(p)) for p in paths]  # every file read before any work
    for p, items in read:  # its baselines compare questions with each other: one gives nothing to compare
        if len(items) < 2:
            raise AuditError(f"{p}: holds {len(items)} question(s); the audit needs at least 2 in a file")
    sim = Similarity(embed_model) if similarity else None
    view = store_view(store) if store is not None else None
    return [audit_items(items, path=p, seed=seed, similarity=sim, store=view) for p, items in read]


def store_view(source: GraphStore | EventGraph) -> StoreView:
    """A :class:`StoreView` of a store (its event graph and the events' ``frequency``) or of a graph."""
    from eventkg.graphstore.base import GraphStore
    from eventkg.queries.graph.event_graph import as_csr

    if isinstance(source, GraphStore):
        from eventkg.queries.graph.csr import EventCSR

        csr = EventCSR.from_store(source)
        return StoreView(csr, _frequencies(source, csr))
    return StoreView(as_csr(source))


def _frequencies(store: Any, csr: Any) -> dict[int, float] | None:
    """Event ``frequency`` per schema position where the store records one (ASER), else None."""
    try:
        rows = store.query("MATCH (e:Event) WHERE e.frequency IS NOT NULL AND e.frequency > 0 "
                           "RETURN e.id AS id, e.frequency AS f")
    except Exception:  # a store without the property: the instance count stands in
        return None
    out = {}
    for r in rows:
        p = csr.position(r["id"])
        if p is not None:
            out[p] = float(r["f"])
    return out or None


def write_json(audits: list[FileAudit], path: str | Path) -> None:
    Path(path).write_text(json.dumps([a.as_dict() for a in audits], indent=2) + "\n")


def table(audits: list[FileAudit]) -> Any:
    """A rich table: one row per check, one column per file (score, chance and interval; failures in red)."""
    from rich.table import Table

    t = Table(title="shortcut audit (score / chance [95% CI]; position: commonest share, p)")
    t.add_column("check")
    for a in audits:
        t.add_column(f"{Path(a.path).name}\n{a.task} {a.level} n={a.n}", justify="right")
    checks = list(dict.fromkeys(f.check for a in audits for f in a.findings))
    for c in checks:
        cells = []
        for a in audits:
            f = next((f for f in a.findings if f.check == c), None)
            if f is None:
                cells.append("")
                continue
            extra = f" p={f.p:.3g}" if f.p is not None else f" [{f.ci[0]:.2f}-{f.ci[1]:.2f}]"
            cell = f"{f.score:.3f}/{f.chance:.2f}{extra}"
            cells.append(cell if f.passed else f"[red]{cell}[/red]")
        t.add_row(c, *cells)
    t.add_row("passed", *("yes" if a.passed else "[red]no[/red]" for a in audits))
    return t


def plot(audits: list[FileAudit], path: str | Path) -> None:
    """A PNG: per file, each shortcut's score minus chance with its interval, the tolerance band shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from eventkg.queries.audit.checks import TOLERANCE

    fig, axes = plt.subplots(1, len(audits), figsize=(5 * len(audits), 6), squeeze=False, sharex=True)
    for ax, a in zip(axes[0], audits, strict=True):
        fs = [f for f in a.findings if f.check != "duplicates"]
        y = list(range(len(fs)))
        d = [f.score - f.chance for f in fs]
        err = [[f.score - f.ci[0] for f in fs], [f.ci[1] - f.score for f in fs]]
        ax.axvspan(-TOLERANCE, TOLERANCE, color="0.9")
        ax.errorbar(d, y, xerr=err, fmt="o", color="k")
        for yi, f in zip(y, fs, strict=True):
            if not f.passed:
                ax.plot(f.score - f.chance, yi, "o", color="red")
        ax.set_yticks(y, [f.check for f in fs])
        ax.axvline(0, color="0.5", lw=0.8)
        ax.set_title(f"{Path(a.path).name} ({a.task} {a.level}, n={a.n})", fontsize=9)
        ax.set_xlabel("score - chance")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
