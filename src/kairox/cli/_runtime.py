"""Running a command inside an ExtensionContext: the whole pipeline, closed again when the command ends."""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from kairox.cli._common import CliState, exit_at_once

if TYPE_CHECKING:
    from kairox.policy import Approver
    from kairox.runtime import ExtensionContext

T = TypeVar("T")


def with_context(
    cli: CliState,
    work: "Callable[[ExtensionContext], Awaitable[T]]",
    *,
    approver: "Approver | None" = None,
    raise_on_required: bool = True,
    for_tools: tuple[str, ...] | None = None,
) -> T:
    """Build the context for the command's workspace, run ``work`` in it, stop everything, return the result."""
    import anyio

    from kairox.runtime import build_extension_context

    resolved = cli.resolve()
    options = cli.runtime_options(
        raise_on_required=raise_on_required,
        for_tools=for_tools,
        wait_for_mcp=True,  # a one-shot command reports the servers as they are, not their cache
    )

    async def main() -> T:
        async with build_extension_context(
            cli=options, approver=approver, events=cli.events(), resolved=resolved
        ) as context:
            return await work(context)

    result = anyio.run(main)
    exit_at_once()  # every server of the context has stopped: nothing is left for the interpreter's teardown to wait on
    return result
