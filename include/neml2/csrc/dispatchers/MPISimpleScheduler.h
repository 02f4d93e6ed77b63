// Seed spelling of the MPISimple scheduler header.
#pragma once

#include "neml2/aoti/schedulers/MPISimple.h"
