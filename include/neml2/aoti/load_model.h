// load_model: the entry point that mirrors Python's neml2.load_model(path, name).
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "neml2/aoti/AnyDispatchedModel.h"
#include "neml2/aoti/DispatchedModel.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/MPISimple.h"
#include "neml2/aoti/schedulers/Scheduler.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"
#include "neml2/aoti/schedulers/concept.h"

namespace neml2::aoti
{
/**
 * @brief Load a compiled model with no dispatch: a pass-through to the CPU Model.
 * @param path the stub `<model>_aoti.i` written by neml2-compile
 * @param name the model's block name in `[Models]`
 *
 * @code
 * auto m = load_model("aoti/model_aoti.i", "model");
 * auto out = m.forward(inputs);
 * @endcode
 */
inline DispatchedModel<PassThrough>
load_model(const std::string & path, const std::string & name)
{
  return DispatchedModel<PassThrough>(path, name);
}

/**
 * @brief Load a compiled model dispatched by @p scheduler; the scheduler's type
 * picks the execution policy (SyncPolicy for Simple and MPISimple, AsyncPolicy
 * for StaticHybrid, AdaptiveHybrid and any scheduler that does not declare
 * `asynchronous = false`). Any type that models the scheduler concept works
 * (schedulers/concept.h).
 *
 * @code
 * auto sched = std::make_shared<Simple>(Simple::Config{"cuda", 4096});
 * auto md = load_model("aoti/model_aoti.i", "model", sched);
 * @endcode
 */
template <class S, std::enable_if_t<is_scheduler_v<S> && !std::is_same_v<S, Scheduler>, int> = 0>
DispatchedModel<default_policy_t<S>>
load_model(const std::string & path, const std::string & name, std::shared_ptr<S> scheduler)
{
  return DispatchedModel<default_policy_t<S>>(path, name, std::move(scheduler));
}

namespace detail
{
template <class S>
bool
try_load(const std::string & path, const std::string & name, const std::shared_ptr<Scheduler> & s,
         std::unique_ptr<AnyDispatchedModel> & out)
{
  if (auto typed = std::dynamic_pointer_cast<S>(s))
  {
    out = std::make_unique<AnyDispatchedModel>(load_model(path, name, std::move(typed)));
    return true;
  }
  return false;
}
} // namespace detail

/**
 * @brief Runtime selection: load with a scheduler known only through its base
 * class; returns a type-erased AnyDispatchedModel. The library's schedulers get
 * their default policy; any other (a user's own) runs through the base class's
 * virtual functions under AsyncPolicy, or SyncPolicy when it has one device.
 */
inline AnyDispatchedModel
load_model(const std::string & path, const std::string & name, std::shared_ptr<Scheduler> scheduler)
{
  if (!scheduler)
    throw FatalError("load_model: the scheduler is null");
  std::unique_ptr<AnyDispatchedModel> out;
  if (detail::try_load<StaticHybrid>(path, name, scheduler, out) ||
      detail::try_load<AdaptiveHybrid>(path, name, scheduler, out) ||
      detail::try_load<Simple>(path, name, scheduler, out) ||
      detail::try_load<MPISimple>(path, name, scheduler, out))
    return std::move(*out);
  if (scheduler->devices().size() == 1)
    return AnyDispatchedModel(
        DispatchedModel<SyncPolicy<Scheduler>>(path, name, std::move(scheduler)));
  return AnyDispatchedModel(
      DispatchedModel<AsyncPolicy<Scheduler>>(path, name, std::move(scheduler)));
}
} // namespace neml2::aoti
