// The headers every source of the aoti and cuda test executables starts with, compiled
// once per executable as a precompiled header (tests/CMakeLists.txt): parsing ATen, the
// library and Catch2 took about a third of each test source's compile time. Configure
// with -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON to compile every source from scratch, as a
// check that each one includes what it uses.
#pragma once

#include "catch.h"

#include <ATen/ATen.h>

#include "neml2/aoti.h"
