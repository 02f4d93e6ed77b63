// The whole public interface of neml2's AOTI dispatch library in one include.
#pragma once

#include "neml2/aoti/AnyDispatchedModel.h"
#include "neml2/aoti/DispatchedModel.h"
#include "neml2/aoti/Exception.h"
#include "neml2/aoti/Model.h"
#include "neml2/aoti/load_model.h"
#include "neml2/aoti/schedulers/MPISimple.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"
