// Seed spelling of the loader header: load_model, DispatchedModel, AnyDispatchedModel.
#pragma once

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/load_model.h"
