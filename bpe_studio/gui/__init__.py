"""BPE Studio's desktop app (PySide6 + pyqtgraph): thin views over ``bpe_studio.core``.

``bpe_studio.gui.app.main()`` starts it, after :mod:`.qt_check` has refused a PySide6 build
known to crash. Training runs in a worker ``QThread`` that iterates the core's trainer; the
views only ever run on the GUI thread and draw from one owner of what they show
(:mod:`.model.app_model`). The packages, by job, each import only those below them:
``views`` > ``training`` > ``jobs`` > ``responsiveness`` > ``model`` (docs/architecture.md).
"""
