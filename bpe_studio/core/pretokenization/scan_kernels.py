"""The compiled scanners' kernels (numba): each pattern's match at one position, written out
from the regex, and the loops that split stretches of code points into pieces.

What it does: ``_gpt2``, ``_cl100k_like`` (cl100k, Llama 3, Qwen2), ``_o200k`` and ``_deepseek``
each return where the pattern's match starting at position ``i`` of ``p[:n]`` ends (``i``
when it does not match there), taking the alternatives in the regex's order and backtracking
where the regex would (the comments say where it matters); the ``_*_piece`` functions of the
patterns that leave gaps return the end of the match or of the gap before the next one.
``p`` holds code points (``numpy.uint32``), ``t`` the class table of ``scan_tables``
(``kernel_table``: one entry per code point, padded with zeros; bits L, N, S, ... below,
and the case-folded contraction letter).
:func:`scan_into` runs a pattern, or one of the Sequences (DeepSeek-V3's three Splits,
StarCoder's two), as Isolated Splits do (each step splits every piece of the one before into
its matches and the gaps between them), writing the pieces' ends; :func:`scan` does so for
many stretches. Every kernel is compiled with nogil=True and cached in the user's cache
folder (``io.numba_cache``).
What it leaves out: counting the pieces (``count_kernels``), which pattern is which kind
(``scan_patterns``), the table (``scan_tables``), the Python API (``scanner``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..io.kernel_options import helper
from ..io.numba_cache import cache_in_user_dir
from .scan_tables import TABLE_SIZE

# Class bits (scan_tables.CLASSES in order).
L, N, S, UP, LO, M, P, SY = 1, 2, 4, 8, 16, 32, 64, 128
# Case-folded contraction letters (bits 8-11: scan_tables.FOLDED "sdmtlver", from 1).
F_S, F_D, F_M, F_T, F_L, F_V, F_E, F_R = 1, 2, 3, 4, 5, 6, 7, 8
_MASK = np.uint32(TABLE_SIZE - 1)
_NL, _CR, _SPACE, _QUOTE, _SLASH = 10, 13, 32, 39, 47
# The kinds (scan_patterns.Kind), and the Sequences of several (scan_patterns.SEQUENCES).
GPT2, CL100K, O200K, LLAMA3, QWEN2, DIGITS3, CJK, DEEPSEEK, DIGIT = range(9)
SEQUENCES = ((DIGITS3, CJK, DEEPSEEK), (DIGIT, GPT2))


@njit(nogil=True, inline="always")
def _cls(t, c):  # type: ignore[no-untyped-def]
    # subtle: ``t`` has TABLE_SIZE entries, zero past the last code point (kernel_table), so
    # a mask keeps any uint32 in bounds without a branch (a value no str holds is in no class;
    # past TABLE_SIZE, another's). A comparison with the limit instead kept LLVM from
    # tightening the loops: GPT-2's ran at half the speed.
    return t[c & _MASK]


@njit(nogil=True, inline="always")
def _fold(t, c):  # type: ignore[no-untyped-def]
    return (_cls(t, c) >> 8) & 15


@helper
def _run(p, t, j, n, mask):  # type: ignore[no-untyped-def]
    """The first index from ``j`` whose code point is in none of the classes of ``mask``."""
    while j < n and _cls(t, p[j]) & mask:
        j += 1
    return j


@helper
def _run_other(p, t, j, n):  # type: ignore[no-untyped-def]
    """The end of a run of [^\\s\\p{L}\\p{N}] from ``j``."""
    while j < n and not _cls(t, p[j]) & (L | N | S):
        j += 1
    return j


@helper
def _newlines(p, j, n, slash):  # type: ignore[no-untyped-def]
    """The end of a run of [\\r\\n]* (with ``slash``: [\\r\\n/]*) from ``j``."""
    while j < n and (p[j] == _NL or p[j] == _CR or (slash and p[j] == _SLASH)):
        j += 1
    return j


@helper
def _contraction(p, t, i, n):  # type: ignore[no-untyped-def]
    """'(?i:[sdmt]|ll|ve|re) at ``i`` (the same set as (?i:'s|'t|'re|'ve|'m|'ll|'d), whose
    alternatives differ in their first letter): its end, else ``i``."""
    if p[i] != _QUOTE or i + 1 >= n:
        return i
    f = _fold(t, p[i + 1])
    if f == F_S or f == F_D or f == F_M or f == F_T:
        return i + 2
    if i + 2 < n:
        g = _fold(t, p[i + 2])
        if (f == F_L and g == F_L) or (f == F_V and g == F_E) or (f == F_R and g == F_E):
            return i + 3
    return i


@njit(nogil=True, inline="always")
def _after_word(p, t, e, n):  # type: ignore[no-untyped-def]
    """o200k's optional contraction after a word ending at ``e``: its end, else ``e``."""
    if e < n and p[e] == _QUOTE:
        return _contraction(p, t, e, n)
    return e


@helper
def _space_run(p, t, i, n, to_end):  # type: ignore[no-untyped-def]
    """The whitespace alternatives at ``i`` (a whitespace character). ``to_end`` (cl100k):
    ``\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s``; else ``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``. Both
    ``\\s*[\\r\\n]`` forms end just after the run's last line break (``\\s*`` gives back
    from the run's end to it; the run's end is no line break, or it would be in the run)."""
    j = _run(p, t, i + 1, n, S)
    if to_end and j == n:
        return j
    k = j - 1
    while k >= i:
        if p[k] == _NL or p[k] == _CR:
            return k + 1
        k -= 1
    # \s+(?!\S): the whole run at the end, else all but its last character (which is then
    # followed by whitespace); a single character is \s (\s+) on its own.
    if j == n or j - i == 1:
        return j
    return j - 1


@njit(nogil=True, inline="always")
def _gpt2(p, t, i, n):  # type: ignore[no-untyped-def]
    # '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    c = p[i]
    if c == _QUOTE and i + 1 < n:
        d = p[i + 1]
        if d == 115 or d == 100 or d == 109 or d == 116:  # s d m t
            return i + 2
        if i + 2 < n:
            e = p[i + 2]
            if (d == 108 and e == 108) or (d == 118 and e == 101) or (d == 114 and e == 101):
                return i + 3
    k = _cls(t, c)
    s = i
    if c == _SPACE and i + 1 < n:
        k2 = _cls(t, p[i + 1])
        if not k2 & S:  # " ?" then a letter, a number or other: the space leads it
            k, s = k2, i + 1
    if k & L:
        return _run(p, t, s + 1, n, L)
    if k & N:
        return _run(p, t, s + 1, n, N)
    if not k & S:
        return _run_other(p, t, s + 1, n)
    j = _run(p, t, i + 1, n, S)
    if j == n or j - i == 1:
        return j
    return j - 1


@njit(nogil=True, inline="always")
def _cl100k_like(p, t, i, n, digits, to_end):  # type: ignore[no-untyped-def]
    """cl100k (``to_end``, digits 3), Llama 3 (digits 3) and Qwen2 (digits 1):
    contraction | [^\\r\\n\\p{L}\\p{N}]?\\p{L}+ | \\p{N}{1,digits} |
    ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*' | whitespace. cl100k's possessive runs give the same
    matches: nothing after them in their alternative can fail."""
    c = p[i]
    if c == _QUOTE:
        e = _contraction(p, t, i, n)
        if e > i:
            return e
    k = _cls(t, c)
    if k & L:
        return _run(p, t, i + 1, n, L)
    # The optional first character is taken when it can be; if no letter follows, the
    # alternative fails (without it, a letter would have to start at i, and none does).
    if c != _NL and c != _CR and not k & N and i + 1 < n and _cls(t, p[i + 1]) & L:
        return _run(p, t, i + 2, n, L)
    if k & N:
        return _run(p, t, i + 1, min(n, i + digits), N)
    if not k & S:
        return _newlines(p, _run_other(p, t, i + 1, n), n, False)
    if c == _SPACE and i + 1 < n and not _cls(t, p[i + 1]) & (L | N | S):
        return _newlines(p, _run_other(p, t, i + 2, n), n, False)
    return _space_run(p, t, i, n, to_end)


@njit(nogil=True, inline="always")
def _o200k_word(p, t, s, n):  # type: ignore[no-untyped-def]
    """[UP]*[LO]+ at ``s`` (UP: Lu Lt Lm Lo M; LO: Ll Lm Lo M): its end, or -1. subtle: the
    capitals give back, from the longest run down, until a lower-case-class character
    follows; a character of both classes (Lm, Lo, marks) may be the one."""
    u = _run(p, t, s, n, UP)
    if u < n and _cls(t, p[u]) & LO:
        return _run(p, t, u + 1, n, LO)
    k = u - 1
    while k >= s:
        if _cls(t, p[k]) & LO:
            return _run(p, t, k + 1, n, LO)
        k -= 1
    return -1


@njit(nogil=True, inline="always")
def _o200k(p, t, i, n):  # type: ignore[no-untyped-def]
    """o200k: two word forms, each [^\\r\\n\\p{L}\\p{N}]? then [UP]*[LO]+ or [UP]+[LO]*, then
    an optional contraction | \\p{N}{1,3} | ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*' | \\s*[\\r\\n]+ |
    \\s+(?!\\S) | \\s+. The regex tries form 1 with the first character, form 1 without it,
    then form 2 likewise: a mark may be the first character or the start of a word."""
    c = p[i]
    k = _cls(t, c)
    first = c != _NL and c != _CR and not k & (L | N) and i + 1 < n
    if first:
        e = _o200k_word(p, t, i + 1, n)
        if e >= 0:
            return _after_word(p, t, e, n)
    e = _o200k_word(p, t, i, n)
    if e >= 0:
        return _after_word(p, t, e, n)
    if first and _cls(t, p[i + 1]) & UP:
        return _after_word(p, t, _run(p, t, _run(p, t, i + 2, n, UP), n, LO), n)
    if k & UP:
        return _after_word(p, t, _run(p, t, _run(p, t, i + 1, n, UP), n, LO), n)
    if k & N:
        return _run(p, t, i + 1, min(n, i + 3), N)
    if not k & S:
        return _newlines(p, _run_other(p, t, i + 1, n), n, True)
    if c == _SPACE and i + 1 < n and not _cls(t, p[i + 1]) & (L | N | S):
        return _newlines(p, _run_other(p, t, i + 2, n), n, True)
    return _space_run(p, t, i, n, False)


@helper
def _ascii_punct(c):  # type: ignore[no-untyped-def]
    return 33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126


@helper
def _ascii_letter(c):  # type: ignore[no-untyped-def]
    return 65 <= c <= 90 or 97 <= c <= 122


@helper
def _deepseek(p, t, i, n):  # type: ignore[no-untyped-def]
    """DeepSeek-V3's third Split: [ASCII punctuation][A-Za-z]+ |
    [^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+ | ' ?[\\p{P}\\p{S}]+[\\r\\n]*' | \\s*[\\r\\n]+ |
    \\s+(?!\\S) | \\s+; ``i`` where none matches (a digit, a control character: a gap)."""
    c = p[i]
    if _ascii_punct(c) and i + 1 < n and _ascii_letter(p[i + 1]):
        j = i + 2
        while j < n and _ascii_letter(p[j]):
            j += 1
        return j
    k = _cls(t, c)
    # A mark may be the optional first character: then [\p{L}\p{M}]+ from the next one, or
    # (if none follows) from the mark itself, which ends at the same place.
    if c != _NL and c != _CR and not k & (L | P | SY) and i + 1 < n and _cls(t, p[i + 1]) & (L | M):
        return _run(p, t, i + 2, n, L | M)
    if k & (L | M):
        return _run(p, t, i + 1, n, L | M)
    if k & (P | SY):
        return _newlines(p, _run(p, t, i + 1, n, P | SY), n, False)
    if c == _SPACE and i + 1 < n and _cls(t, p[i + 1]) & (P | SY):
        return _newlines(p, _run(p, t, i + 2, n, P | SY), n, False)
    if k & S:
        return _space_run(p, t, i, n, False)
    return i


@helper
def _in_cjk(c):  # type: ignore[no-untyped-def]
    """In [一-龥\\u3040-ゟ゠-ヿ]: U+4E00-U+9FA5 and U+3040-U+30FF."""
    return 0x4E00 <= c <= 0x9FA5 or 0x3040 <= c <= 0x30FF


# The pieces of a pattern that leaves gaps: the match at i, or the gap up to the next match
# (``(?:(?!X)(?s:.))+``: how an Isolated Split keeps the text between matches).


@helper
def _digits3_piece(p, t, i, n):  # type: ignore[no-untyped-def]
    """\\p{N}{1,3}, or the gap up to the next number."""
    if _cls(t, p[i]) & N:
        return _run(p, t, i + 1, min(n, i + 3), N)
    j = i + 1
    while j < n and not _cls(t, p[j]) & N:
        j += 1
    return j


@helper
def _digit_piece(p, t, i, n):  # type: ignore[no-untyped-def]
    """\\p{N}, or the gap up to the next number."""
    if _cls(t, p[i]) & N:
        return i + 1
    j = i + 1
    while j < n and not _cls(t, p[j]) & N:
        j += 1
    return j


@helper
def _cjk_piece(p, t, i, n):  # type: ignore[no-untyped-def]
    """[一-龥\\u3040-ゟ゠-ヿ]+, or the gap up to the next such character."""
    inside = _in_cjk(p[i])
    j = i + 1
    while j < n and _in_cjk(p[j]) == inside:
        j += 1
    return j


@helper
def _deepseek_piece(p, t, i, n):  # type: ignore[no-untyped-def]
    e = _deepseek(p, t, i, n)
    if e > i:
        return e
    e = i + 1
    while e < n and _deepseek(p, t, e, n) <= e:
        e += 1
    return e


# subtle: one loop per pattern, each calling its match function by name, which numba inlines
# (inline="always"), so that a piece costs no call: a kind looked up per piece, a match
# function passed as an argument, or one left for LLVM to inline, costs a call per piece
# (GPT-2's loop ran at half the speed). The helpers they call (_run and the rest) are left to
# LLVM: inlining them too gained o200k a tenth and made the first compile five times longer.


@helper
def _loop_gpt2(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _gpt2(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_cl100k_like(p, t, a, b, out, m, digits, to_end):  # type: ignore[no-untyped-def]
    # One loop for cl100k, Llama 3 and Qwen2 (their match inlined once, not three times: a
    # second of the first compile each).
    i = a
    while i < b:
        i = _cl100k_like(p, t, i, b, digits, to_end)
        out[m] = i
        m += 1
    return m


@helper
def _loop_o200k(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _o200k(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_digits3(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _digits3_piece(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_cjk(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _cjk_piece(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_deepseek(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _deepseek_piece(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_digit(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i = a
    while i < b:
        i = _digit_piece(p, t, i, b)
        out[m] = i
        m += 1
    return m


@helper
def _loop_deepseek_v3(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i0 = a
    while i0 < b:
        e0 = _digits3_piece(p, t, i0, b)
        i1 = i0
        while i1 < e0:
            e1 = _cjk_piece(p, t, i1, e0)
            i2 = i1
            while i2 < e1:
                i2 = _deepseek_piece(p, t, i2, e1)
                out[m] = i2
                m += 1
            i1 = e1
        i0 = e0
    return m


@helper
def _loop_starcoder(p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    i0 = a
    while i0 < b:
        e0 = _digit_piece(p, t, i0, b)
        i1 = i0
        while i1 < e0:
            i1 = _gpt2(p, t, i1, e0)
            out[m] = i1
            m += 1
        i0 = e0
    return m


@helper
def scan_into(kinds, p, t, a, b, out, m):  # type: ignore[no-untyped-def]
    """Write the ends of the pieces of ``p[a:b]`` into ``out`` from index ``m``, under the
    steps ``kinds`` (one kind, or one of the Sequences of :data:`SEQUENCES`: each step splits
    the pieces of the one before); returns the index after the last one written."""
    if kinds.size == 3:
        return _loop_deepseek_v3(p, t, a, b, out, m)
    if kinds.size == 2:
        return _loop_starcoder(p, t, a, b, out, m)
    k = kinds[0]
    if k == GPT2:
        return _loop_gpt2(p, t, a, b, out, m)
    if k == CL100K:
        return _loop_cl100k_like(p, t, a, b, out, m, 3, True)
    if k == O200K:
        return _loop_o200k(p, t, a, b, out, m)
    if k == LLAMA3:
        return _loop_cl100k_like(p, t, a, b, out, m, 3, False)
    if k == QWEN2:
        return _loop_cl100k_like(p, t, a, b, out, m, 1, False)
    if k == DIGITS3:
        return _loop_digits3(p, t, a, b, out, m)
    if k == CJK:
        return _loop_cjk(p, t, a, b, out, m)
    if k == DEEPSEEK:
        return _loop_deepseek(p, t, a, b, out, m)
    return _loop_digit(p, t, a, b, out, m)


@njit(nogil=True)
def scan(kinds, p, t, starts, stops):  # type: ignore[no-untyped-def]
    """The ends of the pieces of the stretches ``p[starts[j]:stops[j]]``, one stretch after
    another (an int64 array)."""
    total = 0
    for j in range(starts.size):
        total += max(stops[j] - starts[j], 0)
    out = np.empty(total, np.int64)
    m = 0
    for j in range(starts.size):
        m = scan_into(kinds, p, t, starts[j], stops[j], out, m)
    return out[:m].copy()


@njit(nogil=True)
def separated(p, a, ends, sep):  # type: ignore[no-untyped-def]
    """``p[a:ends[-1]]`` with ``sep`` between the pieces that end at ``ends``, and True; or
    False when ``sep`` occurs in it (the caller picks another). One ``str.split`` of its text
    then gives the pieces, without a Python slice per piece."""
    if ends.size == 0:
        return np.empty(0, np.uint32), True
    stop = ends[-1]
    out = np.empty(stop - a + ends.size - 1, np.uint32)
    w = 0
    q = 0
    for j in range(a, stop):
        c = p[j]
        if c == sep:
            return out, False
        if j == ends[q]:
            out[w] = sep
            w += 1
            q += 1
        out[w] = c
        w += 1
    return out, True


# Compiled code is cached outside the source tree (see io.numba_cache); the first run compiles.
KERNELS = (scan, separated)
cache_in_user_dir(*KERNELS)
