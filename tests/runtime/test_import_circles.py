"""kairox.runtime's modules import each other in one direction: no circle, not even one closed only for the type
checker (``if TYPE_CHECKING:``), which still ties the two files together for whoever reads or changes them."""

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "src" / "kairox" / "runtime"


def _module_level_imports(path: Path) -> set[str]:
    """The kairox.runtime modules ``path`` imports at module level, those under ``if TYPE_CHECKING:`` included
    (imports inside functions load late and tie nothing at import time)."""
    found: set[str] = set()
    statements = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.If):
            statements += [*node.body, *node.orelse]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kairox.runtime."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("kairox.runtime."))
    return found


def test_no_circle_among_the_runtime_modules() -> None:
    graph = {f"kairox.runtime.{p.stem}": _module_level_imports(p) for p in RUNTIME.glob("_*.py")}
    circles = []
    for start in graph:
        stack = [(start, (start,))]
        while stack:
            here, path = stack.pop()
            for target in graph.get(here, ()):
                if target == start:
                    circles.append(" -> ".join((*path, start)))
                elif target not in path:
                    stack.append((target, (*path, target)))
    assert circles == [], circles
