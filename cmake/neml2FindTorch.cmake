# Finds LibTorch through a Python interpreter that has torch installed, so that
# neither this build nor a project using the installed package passes torch paths.
#
# Used by the top-level CMakeLists.txt and by the installed neml2Config.cmake.
#
# Which torch, first match wins:
#   Torch_DIR             set by the user: used as is, Python is not asked.
#   Python_EXECUTABLE     the interpreter whose torch.utils.cmake_prefix_path is used.
#   NEML2_DEFAULT_PYTHON  the interpreter neml2 was built with (set by neml2Config.cmake).
#   python3 / python      found on PATH by FindPython.
#
# Defines the imported target `torch` and TorchConfig's TORCH_* variables.

if(TARGET torch)
  return()
endif()

# Torch_DIR that we did not set ourselves is the user's explicit choice.
if(Torch_DIR AND NOT DEFINED CACHE{_NEML2_TORCH_PYTHON})
  find_package(Torch REQUIRED)
  return()
endif()

if(Python_EXECUTABLE)
  set(_neml2_python "${Python_EXECUTABLE}")
elseif(NEML2_DEFAULT_PYTHON AND EXISTS "${NEML2_DEFAULT_PYTHON}")
  set(_neml2_python "${NEML2_DEFAULT_PYTHON}")
else()
  find_package(Python 3 REQUIRED COMPONENTS Interpreter)
  set(_neml2_python "${Python_EXECUTABLE}")
endif()

execute_process(
  COMMAND "${_neml2_python}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
  RESULT_VARIABLE _neml2_rc
  OUTPUT_VARIABLE _neml2_torch_prefix
  ERROR_VARIABLE _neml2_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _neml2_rc EQUAL 0 OR NOT IS_DIRECTORY "${_neml2_torch_prefix}")
  # The last line of a traceback says what went wrong.
  string(STRIP "${_neml2_err}" _neml2_err)
  string(REGEX REPLACE ".*\n" "" _neml2_err "${_neml2_err}")
  message(FATAL_ERROR
    "neml2: cannot locate LibTorch through ${_neml2_python} "
    "(import torch failed or gave no cmake_prefix_path): ${_neml2_err}\n"
    "Pass -DPython_EXECUTABLE=<a python with torch installed>, "
    "or -DTorch_DIR=<folder holding TorchConfig.cmake>.")
endif()

# find_package(Torch) caches Torch_DIR and library paths; switching to another
# interpreter's torch in the same build folder would silently mix the two.
if(DEFINED CACHE{_NEML2_TORCH_PYTHON} AND NOT "${_NEML2_TORCH_PREFIX}" STREQUAL "${_neml2_torch_prefix}")
  message(FATAL_ERROR
    "neml2: this build folder was configured with the torch in ${_NEML2_TORCH_PREFIX} "
    "(from ${_NEML2_TORCH_PYTHON}); ${_neml2_python} has the one in ${_neml2_torch_prefix}. "
    "Use a fresh build folder to switch torch.")
endif()
set(_NEML2_TORCH_PYTHON "${_neml2_python}" CACHE INTERNAL "Python used to locate torch")
set(_NEML2_TORCH_PREFIX "${_neml2_torch_prefix}" CACHE INTERNAL "torch.utils.cmake_prefix_path")

find_package(Torch REQUIRED CONFIG HINTS "${_neml2_torch_prefix}")

unset(_neml2_python)
unset(_neml2_rc)
unset(_neml2_err)
unset(_neml2_torch_prefix)
