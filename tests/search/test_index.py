"""The shared FTS5 index: BM25 ranking over weighted fields, explanations read from FTS5, a stored index."""

from kairox.search import SearchIndex, query_words, split_identifier

FIELDS = {"name": 4.0, "description": 1.0}
DOCS = [
    ("gh.create_issue", {"name": "createIssue", "description": "Open a new issue in a GitHub repository."}),
    ("gh.list_issues", {"name": "list_issues", "description": "List the issues of a repository."}),
    ("fs.read", {"name": "read_file", "description": "Read a text file."}),
]


def test_identifiers_split_at_case_changes_digits_and_underscores() -> None:
    assert split_identifier("createPullRequest") == ["create", "pull", "request"]
    assert split_identifier("browser_navigate_back") == ["browser", "navigate", "back"]
    assert split_identifier("HTTPServer2") == ["http", "server", "2"]
    assert query_words("Please create an issue for the createIssue bug") == ["create", "issue", "bug"]


def test_name_weight_and_stemming_rank_and_explain() -> None:
    index = SearchIndex.build(FIELDS, DOCS)
    hits = index.search("creating issues")
    assert [h.key for h in hits] == ["gh.create_issue", "gh.list_issues"]
    best = hits[0]
    assert [(t.term, t.fields) for t in best.terms] == [("creating", ("name",)), ("issues", ("name", "description"))]
    assert abs(sum(t.score for t in best.terms) - best.score) < 1e-9  # the explanation adds up to the ranking
    assert index.search("weather in lisbon") == []
    assert index.search('"AND" NEAR(') == []  # query syntax is only text


def test_adjacent_query_words_held_together_are_reported_as_phrases() -> None:
    index = SearchIndex.build(FIELDS, DOCS)
    [hit] = index.search(["text", "file"], phrases=True)
    assert hit.key == "fs.read" and hit.phrases == ("text file",)
    [hit] = index.search(["file", "text"], phrases=True)
    assert hit.phrases == ()
