"""neml2.runtime: libstdc++ joins the global symbol scope, before torch opens a package."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import PYTHON_DIR

# In a fresh interpreter that has imported torch: where the global symbol search finds
# std::filesystem::remove_all (which libtorch_cpu.so exports too), before and after.
PROBE = """
import ctypes, torch
from neml2.runtime import LIBSTDCXX, use_system_cxx_runtime
SYMBOL = "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathE"
def address(lib):
    try:
        return ctypes.cast(getattr(lib, SYMBOL), ctypes.c_void_p).value
    except AttributeError:
        return None
libstdcxx = address(ctypes.CDLL(LIBSTDCXX))
before = address(ctypes.CDLL(None))
use_system_cxx_runtime()
after = address(ctypes.CDLL(None))
print(libstdcxx is not None, before == libstdcxx, after == libstdcxx)
"""


def test_global_scope_resolves_the_cxx_runtime_after_the_call() -> None:
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    found, before, after = result.stdout.split()
    assert found == "True"
    # A Python process has no C++ runtime in its global scope until the call puts it there.
    assert (before, after) == ("False", "True")
