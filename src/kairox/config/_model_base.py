"""The base every config model shares: unknown keys are errors, values are frozen, validators are built lazily."""

from pydantic import BaseModel, ConfigDict


class ConfigModel(BaseModel):
    # defer_build: a model's validator is built when it first validates, so a process that only starts an MCP
    # server builds McpServerConfig's and no other. The attribute docstrings under the fields are the
    # descriptions of the keys; _field_docs reads them from the source when the reference asks, not on import.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)
