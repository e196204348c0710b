"""``eventkg audit``: the shortcut audit of EV²-format question files (:mod:`eventkg.queries.audit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eventkg.cli.shared import OldModelOpt, console, err_console, renamed_option, state
from eventkg.graphstore.atomic import atomic_path, check_output_file


def audit_cmd(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="EV²-format JSON-lines files (CEC or CRR, schema or instance).")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the findings as JSON here.")] = None,
    plot_out: Annotated[Path | None, typer.Option("--plot", help="Write the plot (PNG) here.")] = None,
    with_store: Annotated[bool, typer.Option("--with-store", help="Also check degree and frequency in the store's graph.")] = False,
    embed_model: Annotated[str | None, typer.Option("--embed-model", help="Sentence-embedding model (default $EVENTKG_EMBED_MODEL or bundled MiniLM; --model, its old name, works for one release).")] = None,
    no_similarity: Annotated[bool, typer.Option("--no-similarity", help="Leave out the sentence-model checks.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seeds the cross-validation folds.")] = 0,
    old_model: OldModelOpt = None,
) -> None:
    """Audit question files for shortcuts: what a model scores without the reasoning.

    Per file, with n, chance and a 95% interval: answer-position balance (chi-square), choice-only
    and form-only baselines (5-fold CV grouped by question), word and TF-IDF overlap with question
    and context, the choice most/least similar to the queried event, the in-file graph (degree,
    mentions), the store's degree and frequency (--with-store), CRR's label prior with and without
    the pair's similarity, duplicates. Exit code 1 when a file fails (a shortcut more than 0.10
    from chance, positions not uniform at p >= 0.01, or repeated questions).

    The Python call: eventkg.queries.audit.report.audit_files(FILES, store=...).

    Example:  eventkg audit S_CEC.jsonl S_CRR.jsonl --json audit.json --plot audit.png
    """
    from eventkg.queries.audit.report import audit_files, plot, table, write_json

    embed_model = renamed_option(embed_model, old_model, "--embed-model", "--model")

    for target, flag in ((json_out, "--json"), (plot_out, "--plot")):
        if target is not None:
            check_output_file(target, flag)  # a folder or a missing folder refused before the work
    if with_store:
        with state(ctx).open(read_only=True) as store:
            audits = audit_files(files, store=store, embed_model=embed_model, similarity=not no_similarity, seed=seed)
    else:
        audits = audit_files(files, embed_model=embed_model, similarity=not no_similarity, seed=seed)
    console.print(table(audits))
    if json_out:
        with atomic_path(json_out, what=f"cannot write --json {json_out}") as tmp:  # whole or not at all
            write_json(audits, tmp)
        err_console.print(f"findings -> {json_out}", highlight=False, markup=False)
    if plot_out:
        with atomic_path(plot_out, what=f"cannot write --plot {plot_out}") as tmp:
            plot(audits, tmp)
        err_console.print(f"plot -> {plot_out}", highlight=False, markup=False)
    if not all(a.passed for a in audits):
        for a in audits:
            if not a.passed:
                err_console.print(f"{a.path}: shortcuts {', '.join(a.failed())}", highlight=False, markup=False)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_cmd)
