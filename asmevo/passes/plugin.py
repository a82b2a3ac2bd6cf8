"""``--load-pass-plugin=FILE.py``: run a Python file that registers passes.

The file is executed as a fresh module named ``asmevo_plugin_<stem>``; it
registers passes through the same API as the built-ins::

    from dataclasses import dataclass
    from asmevo.passes import Pass, register_pass

    @register_pass
    @dataclass
    class CountMovs(Pass):
        name = "count-movs"
        ...

(complete example: examples/plugin_strip_nops.py, docs/passes.md).  Any
exception while loading -- a syntax error, an import error, an exception at
module level, a name clash -- becomes a :class:`PluginError` naming the file
and line, which asmevo-opt prints before exiting with status 2.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback

from ..errors import AsmevoError
from . import registry


class PluginError(AsmevoError):
    """A pass plugin that cannot be loaded."""


_LOADED: dict[str, list[str]] = {}


def load_pass_plugin(path: str) -> list[str]:
    """Execute plugin ``path``; returns the pass names it registered.  Loading the same
    file again in one process does nothing (returns the same names) while its passes
    are still registered.

    Raises:
        PluginError: missing file, not ``.py``, or the file raised while loading.
    """
    real = os.path.realpath(path)
    if real in _LOADED and all(registry.lookup(n) is not None for n in _LOADED[real]):
        return list(_LOADED[real])
    if not os.path.isfile(path):
        raise PluginError("pass plugin not found", file=path)
    if not path.endswith(".py"):
        raise PluginError("a pass plugin must be a Python file (.py)", file=path)
    before = set(registry.pass_names())
    stem = os.path.splitext(os.path.basename(path))[0]
    modname = "asmevo_plugin_" + "".join(c if c.isalnum() else "_" for c in stem)
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:  # pragma: no cover - not a loadable file
        raise PluginError("cannot load pass plugin", file=path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    registry.CURRENT_ORIGIN = path
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as e:
        sys.modules.pop(modname, None)
        raise PluginError(f"syntax error in pass plugin: {e.msg}", file=path, line=e.lineno,
                          column=e.offset) from None
    except AsmevoError as e:
        sys.modules.pop(modname, None)
        raise PluginError(f"pass plugin failed to load: {e.message}", file=path,
                          line=_plugin_line(e, path)) from None
    except BaseException as e:  # noqa: BLE001 - any plugin failure is reported, not raised
        sys.modules.pop(modname, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise PluginError(f"pass plugin raised {type(e).__name__}: {e}", file=path,
                          line=_plugin_line(e, path)) from None
    finally:
        registry.CURRENT_ORIGIN = "plugin"
    added = sorted(set(registry.pass_names()) - before)
    _LOADED[real] = added
    if not added:
        raise PluginError("pass plugin registered no passes (use "
                          "asmevo.passes.register_pass)", file=path)
    return added


def _plugin_line(e: BaseException, path: str) -> int | None:
    """Innermost traceback line that lies in the plugin file."""
    line = None
    real = os.path.realpath(path)
    for fr in traceback.extract_tb(e.__traceback__):
        if os.path.realpath(fr.filename) == real:
            line = fr.lineno
    return line
