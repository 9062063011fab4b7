"""Package APIs whose names load their module on first use (PEP 562), so importing one name of a package does not
import every module behind the package."""

import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose ``exports`` map each private module (relative name,
    ``"._models"``) to the names it gives the package's API.

    A name's module is imported when the name is first read (``from kairox.config import McpServerConfig``
    imports ``kairox.config._models`` and nothing else of the package); the value is then stored in the
    package, so later reads are plain attribute reads. The package keeps its names in ``__all__`` and imports
    them under ``TYPE_CHECKING`` for the type checker and the import-layer check, which see the same edges.
    """
    where = {
        name: package + module if module.startswith(".") else module
        for module, names in exports.items()
        for name in names
    }
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # __import__, not importlib.import_module: the import statement's own path, which -X importtime reports
        __import__(module)
        value = getattr(sys.modules[module], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
