"""The simulated task suite: one module per app (or app pair), each registering its tasks on import."""

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
