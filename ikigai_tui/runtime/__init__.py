"""Builds a running session from settings: shared by the CLI, the TUI and the tests."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_tui.config import Config, ConfigError
from ikigai_tui.core.memory.sandbox import MemoryLimits
from ikigai_tui.core.memory.service import MemorySettings, attach_memory, default_root
from ikigai_tui.core.tools.permissions import PermissionService, Rules
from ikigai_tui.core.compaction import CompactionSettings
from ikigai_tui.core.events import WriteBatch
from ikigai_tui.core.matching import embedder as embedders
from ikigai_tui.core.provider import ProviderError
from ikigai_tui.core.mailbox import MailSettings
from ikigai_tui.core.session import Session, SessionSettings
from ikigai_tui.core.tools.running import ToolSettings
from ikigai_tui.core.tool_results import ToolResultsSettings
from ikigai_tui.store import open_store
from ikigai_tui.support.heap import return_big_blocks
from ikigai_tui.llm.providers import Providers
from ikigai_tui.llm.providers import default_model as model_for_keys

if TYPE_CHECKING:
    from ikigai_tui.core.matching.embedder import Embedder
    from ikigai_tui.tui.app import IkigaiApp


def default_model(config: Config) -> str:
    """The configured model, else one for the first provider key found, else offline."""
    return config.model or model_for_keys(os.environ)


def check_models(config: Config, providers: Providers | None = None) -> None:
    """The configured model names must be usable: a ConfigError (exit status 2) before
    anything is opened or created."""
    providers = providers or Providers(aliases=config.aliases)
    for model in (config.model, config.matcher_model, config.compact_model):
        if model:
            try:
                providers.check(model)
            except ProviderError as exc:
                raise ConfigError(str(exc)) from None


async def open_session(config: Config, *, create: bool = True, readonly: bool = False,
                       new_id: Callable[[], str] | None = None) -> Session:
    """Open (or, with create, make) the database and the session over it. With readonly
    the file is opened read-only (for reports): nothing is created, written or re-moded."""
    return_big_blocks()  # before the first big message: see support/heap.py
    embedders.use(_default_embedder)  # the local matcher's model (loads on first use)
    providers = Providers(
        config.offline_delay, api_base=config.api_base, model_api_bases=config.model_api_bases,
        model_input_limits=config.model_input_limits,
        timeout=config.timeout, max_retries=config.max_retries, concurrency=config.concurrency,
        aliases=config.aliases,
    )
    check_models(config, providers)  # before the database: a bad name writes nothing
    from ikigai_tui.support import diagnostics

    watched = diagnostics.watch(providers)  # --debug: requests' sizes and timings logged
    store = await open_store(config.db, create=create and not readonly, readonly=readonly)
    # Aliases and bare names are stored as the full names they stand for.
    settings = SessionSettings(model=providers.resolve(default_model(config)), budget=config.budget,
                               system_prompt=config.system_prompt,
                               matcher_model=(providers.resolve(config.matcher_model)
                                              if config.matcher_model else None),
                               matcher_concurrency=config.matcher_concurrency,
                               matcher_chunk_tokens=config.matcher_chunk_tokens,
                               compaction=compaction_settings(config, providers),
                               workspace=str(config.cwd) if config.cwd else _started_in(),
                               tools=ToolSettings(config.max_tool_rounds, config.bash_max_timeout,
                                                  config.tool_env_pass),
                               tool_results=ToolResultsSettings(config.tool_results_keep,
                                                                config.tool_results_exclude,
                                                                config.tool_results_trigger),
                               llm_context_changes=config.llm_context_changes,
                               mail=MailSettings(config.mail, config.wake_limit, config.wait_timeout))
    try:
        session = await Session.open(store, watched, settings,
                                     create_root=create and not readonly, new_id=new_id)
        attach_memory(session, memory_settings(config))
        session.permissions = PermissionService(Rules(config.permissions))
        if config.mcp_servers and not readonly:  # started by the first turn that offers tools
            from ikigai_tui.mcp_servers import McpServers

            session.use_tool_servers(McpServers(config.mcp_servers, base_dir=settings.workspace))
        if config.cwd is not None and not readonly and session.tree.root is not None:
            await record_workspace(session, session.tree.root.id, config.cwd)
    except BaseException:
        await store.close()
        raise
    if hasattr(store, "on_trouble"):  # a server that can be lost and come back (PostgreSQL)
        from ikigai_tui.core.notices import StoreTrouble

        store.on_trouble = lambda line: session.notify(StoreTrouble(line))
    if diagnostics.debugging():
        session.subscribe(diagnostics.on_notice)
    return session


def _started_in() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed under us: the session asks again later
        return None


async def record_workspace(session: Session, agent_id: str, folder: Path) -> None:
    """--cwd: the agent's workspace set (a `cwd` event) unless it is already that folder."""
    replayer = await session.replayer(agent_id)
    if replayer.cwd == str(folder):
        return
    batch = WriteBatch()
    batch.add(agent_id, "cwd", {"path": str(folder), "previous": str(session.workspace(agent_id)),
                                "source": "--cwd"})
    await session.commit(batch)


def memory_settings(config: Config) -> MemorySettings:
    return MemorySettings(config.memories_dir or default_root(),
                          MemoryLimits(config.memory_file_bytes, config.memory_files,
                                       config.memory_total_bytes),
                          config.memory_writes)


def compaction_settings(config: Config, providers: Providers) -> CompactionSettings:
    return CompactionSettings(
        model=providers.resolve(config.compact_model) if config.compact_model else None,
        auto=config.auto_compact, warn=config.compact_warn, at=config.compact_at,
        concurrency=config.matcher_concurrency,
        summarize_pruned=config.summarize_pruned, pruned_reserve=config.summary_reserve)


async def reachable(config: Config) -> None:
    """Open the configured database and close it: CannotOpen (one line) when it cannot
    be reached, before a full screen starts."""
    store = await open_store(config.db)
    await store.close()


async def close_session(session: Session) -> None:
    await session.close()
    await session.store.close()


def _default_embedder() -> Embedder:
    from ikigai_tui.embed import default_embedder  # its module: when a matcher is made

    return default_embedder()


def create_app(config: Config, *, new_id: Callable[[], str] | None = None,
               session_factory: Callable[[Config], Awaitable[Session]] | None = None,
               **options: Any) -> IkigaiApp:
    """The full-screen app as the CLI starts it (tests build it the same way): over the
    configured database and providers, or the session `session_factory` opens; exact
    token counts from worker processes once its first frame is drawn."""
    from ikigai_tui.llm import token_worker
    from ikigai_tui.tui.app import IkigaiApp

    return IkigaiApp(config, session_factory=session_factory or (
        lambda config: open_session(config, new_id=new_id)), session_closer=close_session,
        first_frame=token_worker.install, **options)
