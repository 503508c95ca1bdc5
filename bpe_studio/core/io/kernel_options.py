"""How the compiled kernels' helpers are compiled: :data:`helper` and :data:`allocating`.

What it does: names the two numba decorators every kernel module uses for the functions its
kernels call. numba counts references to arrays: a function increfs each array it is passed
(a tuple: each of its arrays) when it starts and decrefs it when it returns, atomically.
The helpers run once per piece or per merge site and take many arrays, and perf put a
quarter of a first encode of Chinese, and a sixth of a merge run, in those two calls
(docs/encoding.md, "Reference counts in the helpers' calls"). A helper that makes no array of
its own, whose caller holds every array for the whole call, needs none of it: :data:`helper`
compiles it without (``_nrt=False``). A function such a helper calls is compiled without it
too, and numba refuses an allocation there; one that allocates says :data:`allocating`.
What it leaves out: the kernels Python calls, which keep numba's default (they allocate and
return arrays), and where they are cached (``numba_cache``). Imported only with numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from numba import njit


class _Decorator(Protocol):
    """What ``njit(...)`` is: it makes a numba dispatcher of a function."""

    def __call__(self, function: Callable[..., Any], /) -> Any: ...


# numba's type stubs list only its public options; it takes ``_nrt`` all the same.
helper = cast(_Decorator, njit(nogil=True, **cast(dict[str, Any], {"_nrt": False})))
allocating = cast(_Decorator, njit(nogil=True, **cast(dict[str, Any], {"_nrt": True})))
