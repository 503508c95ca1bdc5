"""How long preparing the compiled merge engine stalls another thread (a GUI's), cold and warm.

What it does: in a fresh process, one thread ticks every 5 ms (standing in for the GUI's event
loop, which needs the GIL to run Python) and records the longest gap between ticks, while a
second thread runs ``merge_engine.prepare()`` (numba's import, then loading the cached kernels
or compiling them) and then trains ``cs336/corpus.en``-sized counts with the compiled engine.
Run with an empty numba cache dir (cold: the first run ever compiles) and then again with the
same dir (warm). Prints the prepare time and the longest and 99th-percentile tick gaps.
What it leaves out: Qt itself (``gui_bench.py`` measures the app's frames).
Run: ``python benchmarks/bench_train_stall.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import json, threading, time
gaps = []
stop = threading.Event()

def tick():
    last = time.perf_counter()
    while not stop.is_set():
        time.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now

ticker = threading.Thread(target=tick)
ticker.start()
time.sleep(0.1)
t0 = time.perf_counter()
def work():
    from bpe_studio.core.train import merge_engine
    merge_engine.prepare()
    from bpe_studio.core.train.merge_engine import CompiledMergeEngine
    from bpe_studio.core.train.engine_start import EngineStart
    counts = {b"hello world" * 50: 3, b"abcabc" * 40: 2}
    e = CompiledMergeEngine(EngineStart.of(counts, [bytes([i]) for i in range(256)], 2000))
    for new_id in range(256, 1000):
        if e.best() is None:
            break
        e.add_token(new_id, b"x")
        e.merge(new_id)
worker = threading.Thread(target=work)
worker.start()
worker.join()
took = time.perf_counter() - t0
stop.set()
ticker.join()
gaps.sort()
print(json.dumps({"prepare_s": took, "max_gap_ms": 1000 * gaps[-1],
                  "p99_gap_ms": 1000 * gaps[int(0.99 * (len(gaps) - 1))]}))
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=cache)
        for label in ("cold (compiles)", "warm (cache)", "warm (cache)"):
            out = subprocess.run(
                [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
            ).stdout
            r = json.loads(out)
            print(
                f"{label}: prepare + train {r['prepare_s']:.2f} s, longest tick gap "
                f"{r['max_gap_ms']:.0f} ms, 99th percentile {r['p99_gap_ms']:.1f} ms "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
