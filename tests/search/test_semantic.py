"""Optional semantic matching: embeddings from an OpenAI-compatible endpoint (a scripted one on 127.0.0.1, spoken
to by Kairox's own httpx wire client), cached by text under the home, blended with BM25, explained; a failing
endpoint leaves the lexical ranking and says so; ``kairox tools search`` uses it when ``tools.semantic`` is on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.servers.embeddings_server import EmbeddingsServer

from kairox.agent import ModelSettings
from kairox.agent._embeddings import provider_embedder
from kairox.registry import ToolIndex
from kairox.search import EmbeddingCache, SemanticRanker
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec, object_schema

SERVERS = Path(__file__).resolve().parents[1] / "servers"


def tool(name: str, description: str, **properties: str) -> ToolSpec:
    schema = object_schema({k: {"type": "string", "description": v} for k, v in properties.items()}, list(properties))
    return ToolSpec(
        name=f"mcp__gh__{name}",
        description=description,
        input_schema=schema,
        source=ToolSource.MCP,
        origin="gh",
        permission=PermissionProfile(access=Access.EXTERNAL),
    )


TOOLS = [
    tool("create_issue", "Create a new issue in a repository.", title="Issue title", body="Issue body"),
    tool("merge_pull_request", "Merge a pull request.", number="Pull request number"),
    tool("get_file_contents", "Get the contents of a file in a repository.", path="File path"),
    tool("search_code", "Search code across repositories.", q="Search query"),
]


def ranker(server: EmbeddingsServer, cache: Path) -> SemanticRanker:
    settings = ModelSettings(
        model="m", provider="scripted", wire_api="chat", base_url=server.base_url, api_key_env="SCRIPTED_KEY"
    )
    return SemanticRanker(
        provider_embedder(settings, "embed-small"),
        model="scripted/embed-small",
        cache=EmbeddingCache(cache),
        weight=0.5,
    )


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-embed-test")


def test_semantic_matching_finds_what_the_words_miss_and_says_why(tmp_path: Path) -> None:
    with EmbeddingsServer() as server:
        index = ToolIndex(TOOLS)
        lexical = index.search("report a defect", limit=3)
        [top, *_] = index.search("report a defect", limit=3, semantic=ranker(server, tmp_path / "e.sqlite"))
        first_round = [len(texts) for texts in server.inputs]
        # a new process' ranker over the same cache file: only the query is embedded again
        again = ToolIndex(TOOLS).search(
            "another defect", limit=1, semantic=(second := ranker(server, tmp_path / "e.sqlite"))
        )
    assert [m.spec.name for m in lexical] == []  # no tool holds "report" or "defect"
    assert top.spec.name == "mcp__gh__create_issue" and top.similarity is not None and top.similarity > 0.2
    assert top.why() == f"semantic similarity {top.similarity:.2f}, lexical 0.00"
    assert top.to_json()["semantic"] == {"similarity": round(top.similarity, 4), "lexical": 0.0}
    assert first_round == [1 + len(TOOLS)]  # the query and every tool, in one request
    assert (server.inputs[-1], second.embedded) == (["another defect"], 1)
    assert again[0].spec.name == "mcp__gh__create_issue"
    assert server.headers[0]["authorization"] == "Bearer sk-embed-test"


def test_lexical_and_semantic_scores_blend_and_both_are_explained(tmp_path: Path) -> None:
    with EmbeddingsServer() as server:
        [top] = ToolIndex(TOOLS).search(
            "merge the pull request", limit=1, semantic=ranker(server, tmp_path / "e.sqlite")
        )
    assert top.spec.name == "mcp__gh__merge_pull_request"
    assert top.lexical == 1.0 and top.similarity is not None
    assert top.why().startswith("merge (name, description); pull (name, description, parameters)")
    assert top.why().endswith(f"semantic similarity {top.similarity:.2f}, lexical 1.00")


def test_a_failing_endpoint_leaves_the_lexical_ranking_and_says_why(tmp_path: Path) -> None:
    with EmbeddingsServer() as server:
        server.fail = True
        matches, note = ToolIndex(TOOLS).search_explained(
            "merge the pull request", limit=2, semantic=ranker(server, tmp_path / "e.sqlite")
        )
    assert [m.spec.name for m in matches][:1] == ["mcp__gh__merge_pull_request"] and matches[0].similarity is None
    assert (
        note is not None
        and note.startswith("semantic matching unavailable (EmbeddingError: ")
        and "answered 500" in note
    )


def test_kairox_tools_search_blends_embeddings_when_tools_semantic_is_on(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAIROX_")}
    env.update(KAIROX_HOME=str(home), KAIROX_SYSTEM_CONFIG=str(home / "none.toml"), SCRIPTED_KEY="sk-cli")
    with EmbeddingsServer() as server:
        (home / "kairox.toml").write_text(
            'model = "m"\nmodel_provider = "scripted"\n[model_providers.scripted]\n'
            f'base_url = "{server.base_url}"\napi_key_env = "SCRIPTED_KEY"\n\n'
            f'[tools]\nsemantic = true\nembedding_model = "embed-small"\n\n'
            f'[mcp_servers.basic]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "basic_server.py"}"]\n',
            encoding="utf-8",
        )
        argv = [
            sys.executable,
            "-m",
            "kairox",
            "--workspace",
            str(workspace),
            "tools",
            "search",
            "sum of numbers",
            "--json",
            "-n",
            "3",
        ]
        on = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        requests = len(server.inputs)
    assert on.returncode == 0, on.stderr
    found = json.loads(on.stdout)
    assert found["matches"][0]["name"] == "mcp__basic__add", found
    assert "semantic similarity" in found["matches"][0]["why"] and "note" not in found
    assert requests == 1 and (home / "cache" / "embeddings.sqlite").is_file()
