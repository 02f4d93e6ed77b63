"""The C++ runtime that AOTInductor packages expect, made global before torch opens one.

A package's ``*.wrapper.so`` is built by the system C++ compiler against the system
``libstdc++.so.6``. torch opens it with ``RTLD_LOCAL``, so the dynamic linker resolves its
standard-library symbols in the process's global scope first and then in the package's
own dependencies, breadth first. A Python process has no ``libstdc++`` in its global
scope (the interpreter is a C program; torch loads its libraries locally), and some torch
wheels (2.11.0+cu130, built with a newer toolchain than the system library they load
against) export copies of standard-library symbols from ``libtorch_cpu.so`` and
``libtorch.so``, which come before ``libstdc++.so.6`` in that search. The package then
mixes two definitions of the same objects and crashes while it is constructed
(doc/python.md, "Loading compiled packages").

A C++ program links ``libstdc++`` itself, so its global scope already has it and the
system definitions win; :func:`use_system_cxx_runtime` gives a Python process the same
order before the first package is loaded.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os

#: The C++ runtime's soname; a library of that name already in the process is reused.
LIBSTDCXX = "libstdc++.so.6"


@functools.cache
def use_system_cxx_runtime() -> None:
    """Put ``libstdc++.so.6`` into the process's global symbol scope (once per process).

    Objects already loaded keep the bindings they have; packages opened afterwards resolve
    standard-library symbols in the system library first, as in a C++ program. Harmless
    where no torch library exports such symbols. A process without ``libstdc++.so.6``
    (never the case where torch runs) is left as it is.
    """
    with contextlib.suppress(OSError):
        ctypes.CDLL(LIBSTDCXX, mode=os.RTLD_GLOBAL)
