"""BPE Studio's desktop app (PySide6 + pyqtgraph): thin views over ``bpe_studio.core``.

``bpe_studio.gui.app.main()`` starts it. Training runs in a worker ``QThread`` that iterates the
core's trainer; the views only ever run on the GUI thread. Importing this package applies
:mod:`.pyside_fix` first, before any Qt object exists.
"""

from .pyside_fix import guard as _guard_pyside

_guard_pyside()
