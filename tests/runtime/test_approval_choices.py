"""The answers an approval request offers are decided once (``approval_choices``); the TUI's keys and the command
line's prompt map onto the same list and give the same answers."""

from kairox.cli._approver import parse_answer, render_request
from kairox.policy import ApprovalAnswer, ApprovalRequest, GrantOption, RuleLayer
from kairox.runtime import ApprovalScope, approval_choices
from kairox.tui._approval import keyed_choices

EXACT = GrantOption(
    rule="shell.exec(git push origin main)", covers="exactly this command line", exact=True, persistable=True
)
WIDE = GrantOption(rule="shell.exec(git push*)", covers="every `git push` command", exact=False, persistable=False)


def request(*, layers: tuple[RuleLayer, ...]) -> ApprovalRequest:
    return ApprovalRequest(tool="shell.exec", reason="asks", rule=None, grants=(EXACT, WIDE), layers=layers)


def test_always_is_offered_per_saveable_grant_only_when_the_gate_names_layers() -> None:
    trusted = approval_choices(request(layers=(RuleLayer.PROJECT, RuleLayer.USER)))
    untrusted = approval_choices(request(layers=()))
    assert [(c.scope, c.grant.rule if c.grant else None, c.with_message) for c in trusted] == [
        (ApprovalScope.ONCE, None, False),
        (ApprovalScope.SESSION, EXACT.rule, False),
        (ApprovalScope.SESSION, WIDE.rule, False),
        (ApprovalScope.ALWAYS, EXACT.rule, False),
        (ApprovalScope.DENY, None, False),
        (ApprovalScope.DENY, None, True),
    ]
    assert trusted[3].layers == (RuleLayer.USER, RuleLayer.PROJECT)  # the user's own file first
    assert ApprovalScope.ALWAYS not in {c.scope for c in untrusted}
    assert trusted[3].answer(layer=RuleLayer.LOCAL).approved is False  # a layer the gate did not offer


def test_the_tui_keys_and_the_prompt_give_the_same_answers() -> None:
    asked = request(layers=(RuleLayer.USER, RuleLayer.PROJECT))
    tui = dict(keyed_choices(asked))
    assert list(tui) == ["o", "1", "2", "a", "d", "m"]
    pairs = [("o", "o"), ("1", "s1"), ("2", "s2"), ("a", "a1")]
    for tui_key, cli_text in pairs:
        assert tui[tui_key].answer(layer=RuleLayer.USER) == parse_answer(asked, cli_text), (tui_key, cli_text)
    assert parse_answer(asked, "a1:project") == ApprovalAnswer.allow_always(EXACT.rule, layer=RuleLayer.PROJECT)
    assert parse_answer(asked, "a2").approved is False  # the wide rule may not be saved
    assert parse_answer(asked, "d not now") == ApprovalAnswer.deny("not now")
    prompt = render_request(asked)
    for choice in approval_choices(asked):
        assert choice.label in prompt


def test_a_subagents_ask_offers_its_grants_for_that_agent_and_for_the_whole_session_on_every_front_end() -> None:
    import dataclasses

    from kairox.web._backend import answer_from_json

    asked = dataclasses.replace(request(layers=()), agent="reviewer")
    sessions = [c for c in approval_choices(asked) if c.scope is ApprovalScope.SESSION]
    assert [(c.label.split(":")[0], c.grant.rule if c.grant else None, c.whole_session) for c in sessions] == [
        ("allow for agent reviewer", EXACT.rule, False),
        ("allow for agent reviewer", WIDE.rule, False),
        ("allow for this session (every agent)", EXACT.rule, True),
        ("allow for this session (every agent)", WIDE.rule, True),
    ]
    tui = dict(keyed_choices(asked))
    assert [tui[k].answer().whole_session for k in ("1", "3")] == [False, True]
    assert parse_answer(asked, "s1") == ApprovalAnswer.allow_session(EXACT.rule)
    assert parse_answer(asked, "w2") == ApprovalAnswer.allow_session(WIDE.rule, whole_session=True)
    assert "[w1] allow for this session (every agent)" in render_request(asked)
    page = answer_from_json({"answer": "session", "grant": EXACT.rule, "whole_session": True})
    assert page == ApprovalAnswer.allow_session(EXACT.rule, whole_session=True)
