import json
from dataclasses import dataclass
from pathlib import Path

from kairox.events import ConfigLoaded, Event, FanoutSink, JsonLinesSink, RecordingSink


@dataclass(frozen=True, kw_only=True, slots=True)
class Sample(Event):
    name: str
    path: Path
    items: tuple[str, ...] = ()


def test_json_lines_sink_writes_one_object_per_event(tmp_path: Path) -> None:
    sink = JsonLinesSink(tmp_path / "trace" / "events.jsonl")
    sink.emit(Sample(name="a", path=Path("/x"), items=("1", "2")))
    sink.emit(ConfigLoaded(workspace="/w", layers=("default", "user"), trusted=False))
    sink.close()
    records = [json.loads(line) for line in (tmp_path / "trace" / "events.jsonl").read_text().splitlines()]
    for record in records:
        assert isinstance(record.pop("ts"), float)
    assert records == [
        {"event": "Sample", "kind": "sample", "name": "a", "path": "/x", "items": ["1", "2"]},
        {
            "event": "ConfigLoaded",
            "kind": "config.loaded",
            "workspace": "/w",
            "layers": ["default", "user"],
            "trusted": False,
            "problems": 0,
        },
    ]


def test_fanout_keeps_going_when_one_sink_fails() -> None:
    class Broken:
        def emit(self, event: Event) -> None:
            raise RuntimeError("disk full")

    recorder = RecordingSink()
    FanoutSink([Broken(), recorder]).emit(Sample(name="b", path=Path("/y")))
    assert recorder.events == [Sample(name="b", path=Path("/y"))]
    assert recorder.of_type(Sample) == [Sample(name="b", path=Path("/y"))]


def test_json_lines_sink_rotates_at_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonLinesSink(path, limit=2_000)
    for index in range(100):
        sink.emit(Sample(name=f"event {index}", path=Path("/x")))
    sink.close()
    older = path.with_name("events.jsonl.1")
    lines = [json.loads(line) for file in (older, path) for line in file.read_text().splitlines()]
    assert path.stat().st_size <= 2_000 and older.stat().st_size <= 2_000
    assert [record["name"] for record in lines] == [f"event {i}" for i in range(100 - len(lines), 100)]


def test_a_recording_keeps_the_newest_events_up_to_its_limit() -> None:
    recorder = RecordingSink(limit=40)
    names: list[str] = []
    for index in range(1_000):
        recorder.emit(Sample(name=f"event {index}", path=Path("/x")))
        names.append(f"event {index}")
        kept = [e.name for e in recorder.of_type(Sample)]
        assert kept == names[-len(kept) :]  # the newest, in order, nothing skipped
        assert min(len(names), 40) <= len(kept) <= 50
    everything = RecordingSink(limit=None)
    for index in range(20_000):
        everything.emit(Sample(name=f"event {index}", path=Path("/x")))
    assert len(everything.events) == 20_000


def test_a_recording_is_bounded_unless_asked_to_keep_everything() -> None:
    """The runtime's recorder (``ExtensionContext.events``, a default ``RecordingSink``) lives as long as a session
    (``kairox serve``, the GUI): it does not keep every call."""
    from kairox.events._sinks import RECORDING_LIMIT

    default = RecordingSink()
    for index in range(3 * RECORDING_LIMIT):
        default.emit(Sample(name=f"event {index}", path=Path("/x")))
    assert RECORDING_LIMIT <= len(default.events) <= RECORDING_LIMIT * 5 // 4
    assert default.events[-1] == Sample(name=f"event {3 * RECORDING_LIMIT - 1}", path=Path("/x"))
