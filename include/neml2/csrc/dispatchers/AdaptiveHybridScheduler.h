// Seed-style spelling of the AdaptiveHybrid scheduler header.
#pragma once

#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
