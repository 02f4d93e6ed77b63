// The whole public interface of neml2's AOTI dispatch library in one include.
#pragma once

#include "neml2/aoti/AnyDispatchedModel.h"
#include "neml2/aoti/DispatchedModel.h"
#include "neml2/aoti/Exception.h"
#include "neml2/aoti/Model.h"
#include "neml2/aoti/devices.h"
#include "neml2/aoti/load_model.h"
#include "neml2/aoti/observers/ChromeTrace.h"
#include "neml2/aoti/observers/ProfilerScopes.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/MPISimple.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"

/**
 * @namespace neml2
 * @brief NEML2 material modelling; this library is its AOTI dispatch part, in neml2::aoti.
 */

/**
 * @namespace neml2::aoti
 * @brief Load AOTInductor-compiled material models and evaluate them on large batches of
 * material points, chunked over CPU and CUDA devices.
 *
 * Entry point: load_model(). The guides start at the main page; the layers, top down:
 * AnyDispatchedModel and DispatchedModel (chunk, run, gather), the execution policies
 * SyncPolicy and AsyncPolicy (how chunks run), the schedulers Simple, StaticHybrid and
 * MPISimple (which device, how big), Model (one device), the artifact readers read_stub()
 * and read_meta(), and the error contract in Exception. devices() lists the devices this
 * process sees, spelled as the schedulers' configs take them.
 */
