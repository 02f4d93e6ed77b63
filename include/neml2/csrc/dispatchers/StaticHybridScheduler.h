// Seed spelling of the StaticHybrid scheduler header.
#pragma once

#include "neml2/aoti/schedulers/StaticHybrid.h"
