"""Training: the merge loop (``trainer``) over counted pre-tokens, its two merge engines behind
one protocol (``merge_python``, and ``merge_engine`` over the compiled ``merge_kernel``, cached
by ``io.numba_cache``), the recorded pair counts of every step (``pair_history``) and the id
layout of a trained vocabulary (``vocab``)."""
