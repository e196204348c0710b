"""``eventkg neo4j``: a local Neo4j 5 Community server, run in the foreground (``start``), stopped by
Ctrl-C or ``eventkg neo4j stop``, and its jars fetched ahead of time (``prepare``).

A thin skin over :mod:`eventkg.graphstore.neo4j.server.launch` (imported inside the commands, so
``eventkg --help`` loads no driver). A running ``start`` keeps a record of itself, one JSON file per
Bolt port in :func:`records_folder` (its pid, the JVM's, the Bolt port and home), and removes it once
its server is stopped; ``stop`` signals the recorded processes and waits for their records to go.
Invariant: a ``start`` that is signalled (Ctrl-C, SIGTERM, SIGHUP) at any point stops its JVM and
deletes a throw-away home before it exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from eventkg import settings
from eventkg.cli.shared import console, err_console
from eventkg.errors import EventKGError

__all__ = ["neo4j_app", "records_folder", "register"]

neo4j_app = typer.Typer(
    help="A local Neo4j 5 Community server from Maven Central jars (needs java 17+ and maven; docs/neo4j.md).\n\n"
         "Example:  eventkg neo4j start --browser",
    no_args_is_help=True,
)

STOP_WAIT_S = 90.0  # how long ``stop`` waits for a server to shut down cleanly (a kept home checkpoints)


def records_folder() -> Path:
    """Where running ``eventkg neo4j start`` processes record themselves: ``$XDG_DATA_HOME/eventkg/neo4j-servers``."""
    return settings.data_home() / "eventkg" / "neo4j-servers"


@neo4j_app.command("start")
def start_cmd(
    import_dir: Annotated[Path | None, typer.Option(
        "--import", metavar="DIR", help="First bulk-import the folder 'eventkg export neo4j-import DIR' wrote "
                                        "(neo4j-admin database import; needs a new --home).")] = None,
    browser: Annotated[bool, typer.Option("--browser", help="Serve Neo4j Browser on the HTTP port.")] = False,
    home: Annotated[Path | None, typer.Option(
        "--home", metavar="DIR", help="Keep the server's data in this folder (default: a temporary one, deleted on stop).")] = None,
    port: Annotated[int, typer.Option("--port", min=0, help="Bolt port (0: any free port).")] = 7687,
    http_port: Annotated[int | None, typer.Option("--http-port", min=1, help="HTTP port (default 7474 with --browser).")] = None,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Turn authentication off.")] = False,
    version: Annotated[str | None, typer.Option(
        "--neo4j-version", help="org.neo4j:neo4j version (default $EVENTKG_NEO4J_VERSION, else 5.26.0).")] = None,
    heap: Annotated[str, typer.Option("--heap", help="JVM heap, e.g. 2g ('default': Neo4j's own).")] = "1g",
    pagecache: Annotated[str, typer.Option("--pagecache", help="Page cache, e.g. 4g ('default': Neo4j sizes it).")] = "512m",
) -> None:
    """Run a Neo4j 5 server on 127.0.0.1 in the foreground until Ctrl-C or 'eventkg neo4j stop'.

    The password is $NEO4J_PASSWORD when set, else a random one; the Bolt URL and an export line
    for NEO4J_USER/NEO4J_PASSWORD are printed once the server answers.

    Example:  eventkg neo4j start --import ./n4csv --home ./n4 --browser
    """
    from eventkg.graphstore.neo4j.server.launch import start

    # Ctrl-C raises KeyboardInterrupt even when the parent left SIGINT ignored (a background job of a
    # script inherits SIG_IGN, and Python then installs no handler of its own)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _exit_quietly)  # from here on a signal unwinds: the JVM is stopped
    signal.signal(signal.SIGHUP, _exit_quietly)
    version = version or settings.neo4j_version()
    err_console.print(f"starting Neo4j {version} (the first start downloads its jars)", highlight=False)
    try:
        server = start(
            port=port or None, http_port=http_port or (7474 if browser else None), auth=not no_auth,
            password=settings.neo4j_credentials()[1], with_browser=browser, home=home, version=version,
            heap=None if heap == "default" else heap, pagecache=None if pagecache == "default" else pagecache,
            import_dir=import_dir,
        )
    except (KeyboardInterrupt, SystemExit):
        raise typer.Exit(130) from None  # start() has stopped the JVM and removed a throw-away home
    record = _record(server)
    try:
        _announce(server, version)
        code = server.process.wait()
        err_console.print(f"error: Neo4j exited with code {code}:\n{server.log_tail()}", highlight=False)
        raise typer.Exit(1)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second signal must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        server.stop(timeout=STOP_WAIT_S)
        record.unlink(missing_ok=True)
    print(f"Neo4j on Bolt port {server.bolt_port} stopped", flush=True)


def _exit_quietly(*_: Any) -> None:
    sys.exit(0)


def _record(server: Any) -> Path:
    """Write the record ``stop`` reads (written whole, then renamed into place)."""
    folder = records_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{server.bolt_port}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "jvm_pid": server.process.pid, "bolt_port": server.bolt_port,
                               "home": str(server.home), "keep_home": server.keep_home}), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _announce(server: Any, version: str) -> None:
    lines = [f"Neo4j {version} running; Bolt {server.bare_url}"]
    if server.user:
        lines += [f"  user {server.user}, password {server.password}",
                  f"  export NEO4J_USER={server.user} NEO4J_PASSWORD='{server.password}'"]
    if server.browser_url:
        lines.append(f"  Browser: {server.browser_url}")
    lines.append(f"  home {server.home}; Ctrl-C or 'eventkg neo4j stop' stops it")
    print("\n".join(lines), flush=True)


@neo4j_app.command("stop")
def stop_cmd(
    port: Annotated[int | None, typer.Option("--port", help="Stop only the server on this Bolt port.")] = None,
) -> None:
    """Stop the servers 'eventkg neo4j start' runs on this machine (all of them, or the one on --port).

    Example:  eventkg neo4j stop --port 7687
    """
    records = sorted(records_folder().glob("*.json")) if records_folder().is_dir() else []
    if port is not None:
        records = [r for r in records if r.name == f"{port}.json"]
    if not records:
        where = f" on Bolt port {port}" if port is not None else ""
        raise EventKGError(f"no running 'eventkg neo4j start'{where} is recorded in {records_folder()}")
    for path in records:
        console.print(_stop_one(path), highlight=False)


def _stop_one(path: Path) -> str:
    """Signal the recorded ``start`` and wait until it has stopped its server and removed the record;
    a record whose ``start`` is gone (killed outright) is cleared, its JVM stopped if it still runs."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        pid, jvm_pid, bolt = int(rec["pid"]), int(rec["jvm_pid"]), int(rec["bolt_port"])
    except FileNotFoundError:
        return f"{path.stem}: stopped already"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EventKGError(f"{path}: not a record of 'eventkg neo4j start' ({exc}); delete it") from None
    if _signal(pid, signal.SIGTERM):
        deadline = time.monotonic() + STOP_WAIT_S
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not path.exists():
            return f"Neo4j on Bolt port {bolt} stopped"
    _signal(jvm_pid, signal.SIGKILL)  # its start is gone or did not answer: the JVM must not outlive it
    path.unlink(missing_ok=True)
    return f"Neo4j on Bolt port {bolt}: its 'eventkg neo4j start' was gone; JVM {jvm_pid} killed, home {rec.get('home')} left"


def _signal(pid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to ``pid``; False when no such process runs."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


@neo4j_app.command("prepare")
def prepare_cmd(
    browser: Annotated[bool, typer.Option("--browser", help="Also the Neo4j Browser jars.")] = False,
    version: Annotated[str | None, typer.Option(
        "--neo4j-version", help="org.neo4j:neo4j version (default $EVENTKG_NEO4J_VERSION, else 5.26.0).")] = None,
) -> None:
    """Resolve (download once) the server's jars and record the JVMs' class-data archives, then exit.

    Example:  eventkg neo4j prepare --browser
    """
    from eventkg.graphstore.neo4j.server.jars import cache_dir
    from eventkg.graphstore.neo4j.server.launch import prepare, record_archives

    version = version or settings.neo4j_version()
    classpath = prepare(version, with_browser=browser, archives=False)
    print(f"Neo4j {version}: {len(classpath)} jars resolved (cached in {cache_dir()})", flush=True)
    for role, archive in record_archives(classpath, retry=True).items():
        print(f"  {role} JVM class-data archive: {archive or 'none (see its .failed note; JVMs start the usual way)'}",
              flush=True)


def register(app: typer.Typer) -> None:
    """Add ``neo4j`` to the ``eventkg`` app."""
    app.add_typer(neo4j_app, name="neo4j")
