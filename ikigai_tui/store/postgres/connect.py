"""Opening a PostgreSQL log: the driver (asyncpg, imported here only), the connections,
the schema made or checked, and the driver's errors as the ports' (one line for the
user, never the password)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ikigai_tui.core.ports import ConflictError, StoreError
from ikigai_tui.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION
from ikigai_tui.store.postgres.url import Target

LOCK_CLASS = 7301  # pg_advisory_xact_lock(LOCK_CLASS, hashtext(schema)): commits, migrations
CONNECT_TIMEOUT = 10.0


def driver() -> Any:
    import asyncpg

    return asyncpg


def _host(target: Target) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(target.dsn)
    return parts.hostname or "localhost" + (f":{parts.port}" if parts.port else "")


def opening_error(target: Target, exc: BaseException) -> StoreError:
    """Why a log could not be opened, in one line."""
    asyncpg = driver()
    where = target.shown
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return StoreError(f"cannot open {where}: the password was refused")
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        return StoreError(f"cannot open {where}: {_first_line(exc)}")
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return StoreError(f"cannot open {where}: no such database ({_first_line(exc)})")
    if isinstance(exc, (OSError, TimeoutError)):
        return StoreError(f"cannot reach the PostgreSQL server of {where} ({_first_line(exc)})")
    return StoreError(f"cannot open {where}: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextlib.contextmanager
def translated(shown: str) -> Iterator[None]:
    """The driver's errors as the ports': a constraint another writer won is a
    ConflictError, anything else a StoreError naming the log (no password)."""
    asyncpg = driver()
    try:
        yield
    except (asyncpg.UniqueViolationError, asyncpg.ForeignKeyViolationError) as exc:
        raise ConflictError(_first_line(exc)) from exc
    except asyncpg.ReadOnlySQLTransactionError as exc:
        raise StoreError(f"cannot write to {shown}: it was opened read-only") from exc
    except asyncpg.PostgresError as exc:
        raise StoreError(f"{shown}: {_first_line(exc)}") from exc
    except (OSError, asyncpg.InterfaceError, asyncpg.exceptions.ConnectionDoesNotExistError) as exc:
        raise StoreError(f"lost the connection to {shown} ({_first_line(exc)})") from exc


async def connect_pool(target: Target, readonly: bool) -> Any:
    asyncpg = driver()
    settings = {"search_path": target.schema, "application_name": "ikigai"}
    if readonly:
        settings["default_transaction_read_only"] = "on"
    try:
        return await asyncpg.create_pool(target.dsn, min_size=1, max_size=4,
                                         server_settings=settings, timeout=CONNECT_TIMEOUT,
                                         statement_cache_size=256)
    except Exception as exc:
        raise opening_error(target, exc) from None


async def ready_schema(con: Any, target: Target, *, create: bool, readonly: bool) -> int:
    """Make (with create) or check the log's schema; its version. A log newer than this
    program is refused, never changed."""
    with translated(target.shown):
        exists = await con.fetchval(
            "SELECT 1 FROM pg_namespace WHERE nspname = $1", target.schema)
        tables = exists and await con.fetchval(
            "SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'ikigai_meta'",
            target.schema)
        if not tables:
            if not create or readonly:
                raise StoreError(f"no ikigai log in schema '{target.schema}' of {target.shown}")
            async with con.transaction():
                await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                                  LOCK_CLASS, target.schema)
                if not exists:
                    await con.execute(f'CREATE SCHEMA IF NOT EXISTS "{target.schema}"')
                await con.execute("CREATE TABLE IF NOT EXISTS ikigai_meta "
                                  "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                await con.execute("INSERT INTO ikigai_meta VALUES ('schema_version', '0') "
                                  "ON CONFLICT DO NOTHING")
        version = int(await con.fetchval(
            "SELECT value FROM ikigai_meta WHERE key = 'schema_version'") or 0)
        if version > SCHEMA_VERSION:
            raise StoreError(f"the log in {target.shown} was written by a newer ikigai "
                             f"(schema {version}; this one knows {SCHEMA_VERSION}): it is "
                             "left unchanged; upgrade ikigai to open it")
        if version < SCHEMA_VERSION and not readonly:
            version = await _migrate(con, target)
        return version


async def _migrate(con: Any, target: Target) -> int:
    async with con.transaction():
        await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                          LOCK_CLASS, target.schema)
        version = int(await con.fetchval(
            "SELECT value FROM ikigai_meta WHERE key = 'schema_version'"))
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                await con.execute(statement)
        await con.execute("UPDATE ikigai_meta SET value = $1 WHERE key = 'schema_version'",
                          str(SCHEMA_VERSION))
    return SCHEMA_VERSION
