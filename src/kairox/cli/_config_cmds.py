"""``kairox config ...`` and ``kairox trust``."""

import typer

config_app = typer.Typer(help="Show, check and edit configuration.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
