"""The context window of a session: what a request takes (counted with the provider's usage where the wire reports
it, estimated otherwise), where a compaction may cut the conversation, and the texts of the summary request."""

import json
from collections.abc import Sequence

from kairox._util._json import JsonObject
from kairox.agent._messages import Message, Role

CHARS_PER_TOKEN = 4
"""The estimate: about four characters a token (JSON of messages and definitions as sent)."""

SUMMARY_SYSTEM = (
    "You summarise a coding session so that it can go on from your summary alone: the earlier messages will be "
    "replaced by it. Do not call tools; answer with the summary only."
)

SUMMARY_REQUEST = (
    "Summarise the conversation so far for your own later use. Keep: what the user asked for and still wants; "
    "decisions made and why; files read, created or changed (exact paths) and what changed; commands run and "
    "what they showed (errors word for word when they matter); what is done and what remains, in order. "
    "Leave out greetings and anything that no longer matters. Be dense: short lines, no preamble."
)

SUMMARY_OPENING = "This session was compacted: the earlier conversation was replaced by this summary of it."


def estimate_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def message_chars(messages: Sequence[Message]) -> int:
    return sum(len(json.dumps(m.to_json(), ensure_ascii=False)) for m in messages)


def definitions_chars(definitions: Sequence[JsonObject]) -> int:
    return len(json.dumps(list(definitions), ensure_ascii=False)) if definitions else 0


def summary_message(text: str) -> Message:
    return Message(
        role=Role.USER,
        text=f"<conversation-summary>\n{SUMMARY_OPENING}\n\n{text.strip()}\n</conversation-summary>",
        summary=True,
    )


def summary_instructions(extra: Sequence[str]) -> str:
    added = [e.strip() for e in extra if e and e.strip()]
    if not added:
        return SUMMARY_REQUEST
    return SUMMARY_REQUEST + "\n\nAlso follow these instructions for the summary:\n" + "\n\n".join(added)


def cut_point(messages: Sequence[Message], keep_turns: int) -> int | None:
    """Where to cut ``messages`` so that the part before is summarised and the rest kept: before the last
    ``keep_turns`` prompts (fewer when there are not that many), else inside the last turn before its latest model
    answer that follows tool results; ``None`` when nothing but an earlier summary could be summarised.

    A cut never separates a model's tool calls from their results, so both parts stay valid conversations."""
    start = 1 if messages and messages[0].summary else 0
    prompts = [i for i, m in enumerate(messages) if m.role is Role.USER and not m.summary]
    if keep_turns == 0 and len(messages) > start and messages[-1].role is not Role.TOOL:
        return len(messages)
    for kept in range(min(keep_turns, len(prompts)), 0, -1):
        if prompts[-kept] > start:
            return prompts[-kept]
    for index in range(len(messages) - 1, start, -1):
        if messages[index].role is Role.ASSISTANT and messages[index - 1].role is Role.TOOL and index - 1 > start:
            return index
    return None
