# Finds LibTorch through a Python interpreter that has torch installed, so that
# neither this build nor a project using the installed package passes torch paths.
#
# Used by the top-level CMakeLists.txt and by the installed neml2Config.cmake.
#
# Which torch, first match wins:
#   Torch_DIR             set by the user: used as is, Python is not asked.
#   Python_EXECUTABLE     the interpreter whose torch.utils.cmake_prefix_path is used.
#   NEML2_PYTHON          the same, as a CMake variable or an environment variable.
#   NEML2_DEFAULT_PYTHON  the interpreter neml2 was built with (set by neml2Config.cmake).
#   .venv/bin/python      of the project being configured (scripts/setup.sh makes it),
#                         when it exists and imports torch.
#   python3 / python      found on PATH by FindPython.
# An interpreter named by the user (the first three) that cannot import torch is an
# error; it is not passed over for the next one.
#
# Defines the imported target `torch` and TorchConfig's TORCH_* variables; the
# interpreter used is _NEML2_TORCH_PYTHON (cached).

if(TARGET torch)
  return()
endif()

# Torch_DIR that we did not set ourselves is the user's explicit choice.
if(Torch_DIR AND NOT DEFINED CACHE{_NEML2_TORCH_PYTHON})
  find_package(Torch REQUIRED)
  return()
endif()

# Runs <python> to ask for torch's CMake prefix: sets <prefix> to it, or to "" with
# <error> saying why (the last line of the traceback, or why the program did not run).
macro(_neml2_ask_torch python prefix error)
  execute_process(
    COMMAND "${python}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    RESULT_VARIABLE _neml2_rc
    OUTPUT_VARIABLE ${prefix}
    ERROR_VARIABLE ${error}
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(STRIP "${${error}}" ${error})
  string(REGEX REPLACE ".*\n" "" ${error} "${${error}}")
  if(NOT _neml2_rc EQUAL 0 OR NOT IS_DIRECTORY "${${prefix}}")
    if("${${error}}" STREQUAL "")
      set(${error} "${_neml2_rc}")
    endif()
    set(${prefix} "")
  endif()
endmacro()

set(_neml2_python "")
set(_neml2_torch_prefix "")
set(_neml2_note "")
if(Python_EXECUTABLE)
  set(_neml2_python "${Python_EXECUTABLE}")
  set(_neml2_from "Python_EXECUTABLE")
elseif(NOT "${NEML2_PYTHON}" STREQUAL "")
  set(_neml2_python "${NEML2_PYTHON}")
  set(_neml2_from "NEML2_PYTHON")
elseif(NOT "$ENV{NEML2_PYTHON}" STREQUAL "")
  set(_neml2_python "$ENV{NEML2_PYTHON}")
  set(_neml2_from "NEML2_PYTHON in the environment")
elseif(NEML2_DEFAULT_PYTHON AND EXISTS "${NEML2_DEFAULT_PYTHON}")
  set(_neml2_python "${NEML2_DEFAULT_PYTHON}")
  set(_neml2_from "the Python neml2 was built with")
else()
  set(_neml2_venv "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  if(EXISTS "${_neml2_venv}")
    _neml2_ask_torch("${_neml2_venv}" _neml2_torch_prefix _neml2_err)
    if(_neml2_torch_prefix)
      set(_neml2_python "${_neml2_venv}")
      set(_neml2_from "the project's .venv")
    else()
      set(_neml2_note "; ${_neml2_venv} was passed over: ${_neml2_err}")
    endif()
  endif()
  if(NOT _neml2_python)
    find_package(Python 3 REQUIRED COMPONENTS Interpreter)
    set(_neml2_python "${Python_EXECUTABLE}")
    set(_neml2_from "found on PATH")
  endif()
  unset(_neml2_venv)
endif()
# NEML2_PYTHON may be a program name on PATH, as scripts/setup.sh takes it.
if(NOT IS_ABSOLUTE "${_neml2_python}")
  find_program(_neml2_program "${_neml2_python}" NO_CACHE)
  if(_neml2_program)
    set(_neml2_python "${_neml2_program}")
  endif()
  unset(_neml2_program)
endif()

if(NOT _neml2_torch_prefix)
  _neml2_ask_torch("${_neml2_python}" _neml2_torch_prefix _neml2_err)
endif()
if(NOT _neml2_torch_prefix)
  if(PROJECT_NAME STREQUAL "neml2")
    set(_neml2_fix "run scripts/setup.sh, or pass ")
  else()
    set(_neml2_fix "pass ")
  endif()
  message(FATAL_ERROR
    "neml2: cannot locate LibTorch through ${_neml2_python} (${_neml2_from}): import "
    "torch failed or gave no cmake_prefix_path: ${_neml2_err}${_neml2_note}\n"
    "To fix: ${_neml2_fix}-DPython_EXECUTABLE=/path/to/python (or set NEML2_PYTHON) "
    "for a Python with torch, or -DTorch_DIR=<folder holding TorchConfig.cmake>.")
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
unset(_neml2_from)
unset(_neml2_note)
unset(_neml2_rc)
unset(_neml2_err)
unset(_neml2_torch_prefix)
