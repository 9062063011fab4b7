"""Help as people read it in other command lines: ``-h``, ``kairox mcp add NAME [COMMAND]...``,
``--layer LAYER``, ``--max-depth N``, instead of typed labels such as ``{name}`` and ``<list[str]>``."""

from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption

HELP_OPTIONS = ["-h", "--help"]


class _PlainArgument(TyperArgument):
    """An argument shown by its metavar alone: ``NAME`` when required, ``[NAME]`` when not, ``...`` when repeated."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def plain_help(command: Any) -> None:
    """Give every argument and option of ``command`` and its subcommands a metavar in capitals."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            param.metavar = param.metavar or (param.name or "value").upper()
            param.__class__ = _PlainArgument  # same fields, only the help rendering differs
        elif isinstance(param, TyperOption) and param.metavar is None and not param.is_flag and not param.count:
            numeric = param.type_descriptor.annotation in (int, float)
            param.metavar = "N" if numeric else (param.name or "value").upper()
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            plain_help(sub)
