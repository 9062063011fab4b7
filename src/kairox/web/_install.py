"""A catalog install started from the page: the same ``install_catalog_entry`` ``kairox mcp catalog install`` runs
(pre-flight, the gate's question, fetch, dry run, write), its typed steps (``InstallStep``) as ``install.progress``
events, its end as ``install.finished``; an installed server then starts in the running session."""

from typing import TYPE_CHECKING, Any

from kairox.config import Layer, McpServerConfig

if TYPE_CHECKING:
    from kairox.catalog import CatalogEntry
    from kairox.runtime import InstallStep
    from kairox.web._backend import WebBackend


def start_install(backend: "WebBackend", entry: "CatalogEntry", *, variables: dict[str, str], layer: Layer) -> str:
    """Start the install in the background; its job id (events carry it)."""
    from kairox.catalog import plan_install

    plan = plan_install(entry)
    secret = {v.name for v in plan.variables if v.secret}
    environ = backend.host_environment(variables, secret)
    job = backend.new_job()
    hub = backend.hub

    def say(step: "InstallStep") -> None:
        hub.publish("install.progress", {"job": job, **step.to_json()})

    async def run() -> None:
        import anyio

        from kairox.runtime import (
            InstallOptions,
            InstallOutcome,
            InstallStage,
            InstallStep,
            add_mcp_server,
            install_catalog_entry,
        )

        def start(message: str) -> None:
            say(InstallStep(stage=InstallStage.START, message=message))

        finished: dict[str, Any] = {
            "job": job,
            "outcome": "error",
            "tools": [],
            "diagnostic": None,
            "server": plan.name,
            "file": None,
        }
        try:
            from kairox.catalog import preflight

            report = await anyio.to_thread.run_sync(lambda: preflight(plan, environ=environ))  # it runs programs
            result = await install_catalog_entry(
                backend.resolved,
                plan,
                approver=backend.approver,
                options=InstallOptions(layer=layer),
                events=hub,
                progress=say,
                report=report,
                environ=environ,
            )
            tools = [t.name for t in result.dry_run.tools] if result.dry_run is not None else []
            finished.update(
                outcome=str(result.outcome),
                tools=tools,
                diagnostic=result.reason,
                file=str(result.file),
                notes=list(result.notes),
            )
            if result.written:
                backend.refresh()
                hub.publish("config.changed", {"file": str(result.file)})
            applies = layer is Layer.USER or backend.resolved.trusted
            context = backend.context
            if result.outcome is InstallOutcome.INSTALLED and applies and context is not None:
                if context.takes_servers:
                    start(f"starting {plan.name!r} in this session")
                    await add_mcp_server(context, plan.name, McpServerConfig.model_validate(plan.table))
                elif not backend.turn_running:  # a session without MCP servers: open it again, with this one
                    start(f"starting {plan.name!r}: the session opens again with it (the conversation continues)")
                    await backend.restart()
                    await backend.ready_context()
                else:
                    start(f"{plan.name!r} starts with the next session (a turn is running)")
        except Exception as exc:  # reported on the page; the GUI keeps running
            finished.update(outcome="error", diagnostic=str(exc))
        hub.publish("install.finished", finished)

    backend.start_soon(run)
    return job


def start_plugin_install(backend: "WebBackend", marketplace: str, name: str) -> str:
    """Install a marketplace's plugin in the background (the runtime's ``install_market_plugin``: the gate asks
    first); its steps as ``plugin.install.progress`` events, its end as ``plugin.install.finished``."""
    import anyio

    job = backend.new_job()
    hub = backend.hub

    def say(message: str, done: int = 0, total: int = 0) -> None:
        hub.publish("plugin.install.progress", {"job": job, "message": message, "done": done, "total": total})

    def from_thread(what: str, done: int, total: int) -> None:
        # copying runs in a worker thread; a step is worth a line when it starts and when it ends
        if done in (0, total):
            anyio.from_thread.run_sync(say, f"{what}: {done} of {total}" if total > 1 else what, done, total)

    async def run() -> None:
        from kairox.plugins import MarketplaceError, PluginInstallDeniedError
        from kairox.runtime import install_market_plugin

        finished: dict[str, Any] = {
            "job": job,
            "plugin": name,
            "marketplace": marketplace,
            "outcome": "error",
            "reason": None,
        }
        try:
            say(
                f"asking to install {name} from {marketplace} into {backend.resolved.home / 'plugins'}"
                f" and enable it in {backend.resolved.layer_file(Layer.USER)}"
            )
            result = await install_market_plugin(
                backend.resolved, marketplace, name, approver=backend.approver, events=hub, progress=from_thread
            )
            record = result.record
            finished.update(
                outcome="installed" if result.enabled else "installed_disabled",
                version=record.version,
                path=str(record.path),
                enabled=result.enabled,
                reason=record.disabled_reason,
                file=str(backend.resolved.layer_file(Layer.USER)),
                applies="from the next session",
                diagnostics=[f"{d.location()}: {d.reason}" for d in result.diagnostics],
            )
            say(f"installed {record.name} {record.version} into {record.path}", 1, 1)
            backend.refresh()
            hub.publish("config.changed", {"file": str(backend.resolved.layer_file(Layer.USER))})
        except PluginInstallDeniedError as exc:
            finished.update(outcome="denied", reason=str(exc))
        except MarketplaceError as exc:
            finished.update(outcome="error", reason=str(exc) + (f" ({exc.hint})" if exc.hint else ""))
        except Exception as exc:  # reported on the page; the GUI keeps running
            finished.update(outcome="error", reason=str(exc))
        hub.publish("plugin.install.finished", finished)

    backend.start_soon(run)
    return job
