"""Connecting to Neo4j: the store URL and its credentials, the driver, one-line connection errors.

* ``neo4j://[user:pass@]host[:port][/database]``: credentials come from the URL, else from
  ``NEO4J_USER``/``NEO4J_PASSWORD`` (:mod:`eventkg.settings`); the URL the store shows (in
  errors, ``store.url``) never contains the password.
* Opening verifies the connection and creates the schema (:mod:`eventkg.graphstore.neo4j.schema`),
  so a wrong address, password or database is a one-line :class:`StoreError` at open, naming
  the real cause: routing drivers hide the socket error, so the address is probed once with
  a plain TCP connect (:func:`reason`).
* :class:`Connection` is the one handle on the database that the store and its parts share:
  sessions (READ access mode for reads, so Neo4j itself refuses a write), read-only queries,
  and the shown URL and address every error names.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

import neo4j
from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable

from eventkg import settings
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.neo4j.schema import ensure_schema

# The driver logs routing failures and server notifications as warnings; without this
# handler Python's last-resort handler would print them under every CLI command. An app
# that configures logging still receives them.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

CONNECT_TIMEOUT = 5.0  # seconds to wait for a TCP connection


class Connection:
    """An open driver and where it points (``url`` as shown: without the password)."""

    def __init__(self, driver: neo4j.Driver, database: str | None, url: str, address: tuple[str, int]) -> None:
        self._driver: neo4j.Driver | None = driver
        self.database, self.url, self.address = database, url, address

    def session(self, *, write: bool = True, **config: Any) -> neo4j.Session:
        """A session on the database: WRITE access mode, or READ (the server refuses writes in it)."""
        if self._driver is None:
            raise StoreError(f"the Neo4j store at {self.url} is closed")
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode, **config)

    def read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[neo4j.Record]:
        """The records of read-only Cypher, run in a READ access-mode session."""
        with self.session(write=False) as s:
            return list(s.run(cypher, dict(params or {})))

    def unreachable(self, exc: BaseException) -> str:
        """The one-line message for this server when it cannot be reached."""
        return unreachable(self.url, self.address, exc)

    def close(self) -> None:
        """Close the driver (again: nothing)."""
        if self._driver is not None:
            self._driver.close()
            self._driver = None


def parse_url(url: str) -> tuple[str, tuple[str, str] | None, str | None, str]:
    """``neo4j://[user:pass@]host[:port][/database]`` -> (driver URL, auth, database, shown URL).

    Credentials come from the URL, else ``NEO4J_USER``/``NEO4J_PASSWORD`` (user ``neo4j``
    when only a password is set), else none. The shown URL never contains the password.
    """
    parts: SplitResult = urlsplit(url)
    if not parts.hostname:
        raise StoreError(f"store URL {url!r}: no host (expected neo4j://[user:pass@]host:port[/database])")
    try:
        port = parts.port or 7687
    except ValueError as exc:
        raise StoreError(f"store URL {url!r}: bad port") from exc
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    driver_url = f"{parts.scheme}://{host}:{port}" + (f"?{parts.query}" if parts.query else "")
    env_user, env_password = settings.neo4j_credentials()
    user = unquote(parts.username) if parts.username else env_user
    password = unquote(parts.password) if parts.password is not None else env_password
    auth = None
    if user or password:
        auth = (user or "neo4j", password or "")
    database = unquote(parts.path.strip("/")) or None
    shown = f"{parts.scheme}://" + (f"{user}@" if parts.username else "") + f"{host}:{port}"
    shown += f"/{database}" if database else ""
    return driver_url, auth, database, shown


def address(driver_url: str) -> tuple[str, int]:
    """(host, port) of a driver URL, for the TCP probe of :func:`reason`."""
    parts = urlsplit(driver_url)
    return parts.hostname or "localhost", parts.port or 7687


def reason(exc: BaseException, addr: tuple[str, int] | None = None) -> str:
    """The root cause of a connection error, on one line (e.g. ``Connection refused``).

    Routing drivers hide the socket error behind "Unable to retrieve routing information",
    so the address is probed once with a plain TCP connect to name the real cause.
    """
    if addr is not None:
        try:
            socket.create_connection(addr, timeout=CONNECT_TIMEOUT).close()
        except OSError as probe:
            return probe.strerror or str(probe) or type(probe).__name__
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def one_line(text: object) -> str:
    """A server or driver message on one line."""
    return " ".join(str(text).split())


def unreachable(url: str, addr: tuple[str, int], exc: BaseException) -> str:
    """The one-line message for a server that cannot be reached."""
    return f"cannot reach Neo4j at {url}: {reason(exc, addr)}"


def connect(url: str) -> Connection:
    """A driver to the database at ``url``, its connectivity verified and its schema created.

    Every failure is a one-line :class:`StoreError` naming the shown URL (and the user, when
    the server refused it); the driver is closed before it is raised.
    """
    driver_url, auth, database, shown = parse_url(url)
    addr = address(driver_url)
    user = auth[0] if auth else None
    try:
        driver = neo4j.GraphDatabase.driver(
            driver_url,
            auth=auth,
            connection_timeout=CONNECT_TIMEOUT,
            max_transaction_retry_time=10.0,
            notifications_min_severity="OFF",  # "unknown rel type" etc. for every empty type
        )
    except (ConfigurationError, ValueError) as exc:
        raise StoreError(f"store URL {shown}: {one_line(exc)}") from exc
    try:
        driver.verify_connectivity()
        ensure_schema(driver, database)
    except AuthError as exc:
        driver.close()
        if not user:
            raise StoreError(
                f"Neo4j at {shown} needs credentials: put them in the URL (neo4j://user:password@host:port) "
                "or set NEO4J_USER and NEO4J_PASSWORD"
            ) from None
        raise StoreError(f"Neo4j at {shown} refused user {user!r}: {one_line(exc.message or exc)}") from None
    except (ServiceUnavailable, OSError) as exc:
        driver.close()
        raise StoreError(unreachable(shown, addr, exc)) from None
    except Neo4jError as exc:
        driver.close()
        raise StoreError(f"Neo4j at {shown}: {one_line(exc.message or exc)}") from None
    return Connection(driver, database, shown, addr)
