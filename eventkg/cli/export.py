"""``eventkg export``: the graph (or a retrieved subgraph) and benchmark items for other tools.

Thin skin over the library: ``rdf`` is :func:`eventkg.queries.export.rdf.export_rdf`,
``graphml`` is :func:`eventkg.queries.export.graphml.export_graphml` (both on the whole store, or
on :func:`eventkg.queries.export.select.select_subgraph` with ``--text``), ``lm-eval`` is
:func:`eventkg.tasks.export_lmeval.export_lm_eval` and ``neo4j-import`` is
:func:`eventkg.graphstore.neo4j.admin_import.export_neo4j_import`. Library modules are imported
inside the commands, so ``eventkg --help`` loads neither rdflib nor the embedding stack.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from eventkg.cli.shared import Bars, OldModelOpt, console, notice, renamed_option, state
from eventkg.errors import UsageError
from eventkg.graphstore.atomic import check_output_file

export_app = typer.Typer(
    help="Export the graph, a subgraph or benchmark items for other tools.\n\n"
    "Example:  eventkg export rdf graph.ttl;  eventkg export graphml sub.graphml --text 'study' -k 5",
    no_args_is_help=True,
)

# The subgraph selection: the options of ``eventkg subgraph``, same names and meaning.
File = Annotated[Path, typer.Argument(help="File to write.")]
Text = Annotated[str | None, typer.Option("--text", help="Export only the subgraph `eventkg subgraph --text` retrieves (default: the whole store).")]
K = Annotated[int | None, typer.Option("-k", help="With --text: how many nearest events seed the subgraph (default 5).")]
Hops = Annotated[int | None, typer.Option("--hops", help="With --text: neighbourhood radius around the seeds (default 2).")]
Rel = Annotated[list[str] | None, typer.Option("--rel", help="With --text: relation types to follow (repeatable; default event relations + HAS_TYPE).")]
Level = Annotated[str | None, typer.Option("--level", help="With --text: seed only from schema or instance events.")]
EmbedModel = Annotated[str | None, typer.Option("--embed-model", help="With --text: sentence-embedding model folder or name; --model, its old name, works for one release.")]
Device = Annotated[str, typer.Option("--device", help="With --text: encoder device: auto (CUDA when present), cpu, cuda, mps.")]
IndexKind = Annotated[str | None, typer.Option("--index-kind", help="With --text: FAISS index for a build: auto, flat, ivf, hnsw (default $EVENTKG_INDEX or auto).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the counts written as JSON.")]


#: the subgraph options by their library argument names (select_subgraph's keywords)
FLAGS = {"k": "-k", "hops": "--hops", "rel_types": "--rel", "level": "--level", "embed_model": "--embed-model",
         "device": "--device", "index_kind": "--index-kind"}


def _export(ctx: typer.Context, write: Callable[[Any, Path], dict], file: Path, as_json: bool,
            text: str | None, **selection: Any) -> None:
    """Open the store, pick the whole store or the subgraph, write, print what was written."""
    given = {name: value for name, value in selection.items() if value is not None and value != []}
    if given.get("device") == "auto":
        del given["device"]
    if text is None and given:
        flags = ", ".join(FLAGS[name] for name in given)
        raise UsageError(f"{flags} apply to a subgraph: give --text too (without --text the whole store is exported)")
    check_output_file(file, "export")  # a folder or a missing folder refused before the store is read
    with state(ctx).open(read_only=True, complete=True) as store:
        if text is None:
            counts = write(store, file)
        else:
            from eventkg.queries.export.select import select_subgraph

            counts = write(select_subgraph(store, text, notice=notice, **given), file)
    if as_json:
        print(json.dumps({"file": str(file), **counts}, indent=2))
        return
    for kind in ("nodes", "edges"):
        for name, n in counts[kind].items():
            if n:
                console.print(f"{kind} {name}: {n:,}", markup=False)
    extra = f", {counts['triples']:,} triples" if "triples" in counts else ""
    console.print(f"wrote {file}: {sum(counts['nodes'].values()):,} nodes, {sum(counts['edges'].values()):,} edges{extra}",
                  markup=False)


def export_rdf_command(ctx: typer.Context, file: File, text: Text = None, k: K = None, hops: Hops = None,
                       rel: Rel = None, level: Level = None, embed_model: EmbedModel = None, device: Device = "auto",
                       index_kind: IndexKind = None, as_json: AsJson = False, old_model: OldModelOpt = None) -> None:
    """Write the store (or, with --text, a retrieved subgraph) as RDF: Turtle for .ttl, N-Triples for .nt.

    Streamed batch by batch with rdflib. Namespace ekg: = https://eventkg.org/ns# (node labels as classes, relationship types and property names as predicates), nodes are https://eventkg.org/id/ID; each edge is one ekg:TYPE triple, its properties (sources, weight, count...) sit on its rdf:Statement.

    Example:  eventkg export rdf graph.ttl  &&  eventkg export rdf learn.nt --text "learn" -k 3 --hops 1
    """
    from eventkg.queries.export.rdf import export_rdf

    _export(ctx, export_rdf, file, as_json, text, k=k, hops=hops, rel_types=rel, level=level,
            embed_model=renamed_option(embed_model, old_model, "--embed-model", "--model"), device=device,
            index_kind=index_kind)


def export_graphml_command(ctx: typer.Context, file: File, text: Text = None, k: K = None, hops: Hops = None,
                           rel: Rel = None, level: Level = None, embed_model: EmbedModel = None, device: Device = "auto",
                           index_kind: IndexKind = None, as_json: AsJson = False, old_model: OldModelOpt = None) -> None:
    """Write the store (or, with --text, a retrieved subgraph) as GraphML with networkx.

    Node attribute label = the node label, edge id and attribute type = the relationship type, properties kept; sources are comma-joined and choices a JSON array (GraphML has no lists). The whole graph is built in memory: for a big store prefer a subgraph or RDF.

    Example:  eventkg export graphml study.graphml --text "PersonX studies all night" -k 5 --hops 2
    """
    from eventkg.queries.export.graphml import export_graphml

    _export(ctx, export_graphml, file, as_json, text, k=k, hops=hops, rel_types=rel, level=level,
            embed_model=renamed_option(embed_model, old_model, "--embed-model", "--model"), device=device,
            index_kind=index_kind)


def export_lm_eval_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Argument(help="Folder to write the lm-eval task configs and data into.")],
    origin: Annotated[str | None, typer.Option("--origin", help="Only imported or generated questions.")] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only questions of this split.")] = None,
) -> None:
    """Write CEC/CRR questions as an lm-evaluation-harness task folder (YAML + JSON lines).

    Example:  eventkg export lm-eval ./lm-tasks && lm_eval --model hf --model_args pretrained=gpt2 --tasks eventkg_ev2 --include_path ./lm-tasks
    """
    from eventkg.tasks.export_lmeval import GROUP, export_lm_eval

    with state(ctx).open(read_only=True, complete=True) as store:
        counts = export_lm_eval(store, out, origin=origin, split=split)
    for name, count in counts.items():
        console.print(f"{name}: {count} documents", markup=False)
    console.print(f"run: lm_eval --tasks {GROUP} --include_path {out.resolve()} --model ...", markup=False)


def export_neo4j_import_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Argument(help="Folder to write the CSV files, import.json and import.sh into.")],
) -> None:
    """Write the graph as CSV files for Neo4j's bulk importer (neo4j-admin database import full).

    The fastest way to put a big graph into a new Neo4j database: ingest into the embedded store (the default --store), export, import offline, start Neo4j. Same ids, labels, relationship types and properties as writing through Bolt (sources as string arrays). Constraints and indexes are created when eventkg first opens the database.

    Example:  eventkg export neo4j-import ./n4csv && eventkg neo4j start --import ./n4csv --home ./n4
    (or, with a Neo4j installation: stop it, then ./n4csv/import.sh neo4j)
    """
    from eventkg.graphstore.neo4j.admin_import import export_neo4j_import

    with state(ctx).open(read_only=True, complete=True) as store, Bars() as bars:
        counts = export_neo4j_import(store, out, progress=bars.update)  # a StoreError is cli.main's one line
    for name, count in counts.items():
        console.print(f"{name}: {count:,}", markup=False)
    console.print(f"wrote {out}; import with: eventkg neo4j start --import {out} --home NEW_FOLDER", markup=False)
    console.print(f"  or, into a stopped Neo4j installation: {out / 'import.sh'} [database]", markup=False)


export_app.command("rdf")(export_rdf_command)
export_app.command("graphml")(export_graphml_command)
export_app.command("lm-eval")(export_lm_eval_command)
export_app.command("neo4j-import")(export_neo4j_import_command)


def register(app: typer.Typer) -> None:
    """Add the ``export`` command group to the eventkg app."""
    app.add_typer(export_app, name="export")
