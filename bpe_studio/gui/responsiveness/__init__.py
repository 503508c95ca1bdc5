"""What keeps the window responsive while the trainer runs in the same interpreter.

The trainer (pure Python, in a worker ``QThread``) and the GUI thread share one GIL. Each
module holds one of the measures, all described once, with the figures that justify them, in
``docs/responsiveness.md`` (re-run with ``benchmarks/gui_bench.py``):

- :mod:`.gil_switches`: the GIL switch interval, shortened while a run or a background job
  needs it;
- :mod:`.collector`: the cyclic garbage collector, paused while a run trains, run on the GUI
  thread only, and kept off what a loaded tokenizer leaves alive;
- :mod:`.busy`: background threads wait between pieces of their work while the GUI thread
  updates or repaints the views;
- :mod:`.trainer_hold`: the GUI thread holds the trainer at its next merge boundary while it
  updates and repaints the views, and after the last merge until the window has shown it;
- :mod:`.frame_budget`: how often the views get a frame while training, and how often the
  editor's tokenizer is rebuilt;
- :mod:`.after_paint`: a run, or a view's background jobs, start once the window has repainted
  what was reset for them.

What it leaves out: the job runner (``gui.jobs``), the glyph warm-up (``gui.views.glyph_warmup``),
freeing the trainer's state in slices (the core's ``BpeTrainer.close``) and the merge
hand-over without one event per merge (``worker.MergeBuffer``).
"""
