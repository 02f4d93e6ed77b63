// Seed spelling of the Simple scheduler header.
#pragma once

#include "neml2/aoti/schedulers/Simple.h"
