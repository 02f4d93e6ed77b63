// The scheduler concept: what an execution policy needs of a scheduler, checked at compile time.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "neml2/aoti/schedulers/Scheduler.h"

namespace neml2::aoti
{
/**
 * @page scheduler_concept The scheduler concept
 *
 * A scheduler decides which device runs the next chunk of a dispatch, and how big
 * it is; it knows devices, never models. A type `S` models the concept when
 *
 * - it derives from neml2::aoti::Scheduler and fills its protected device table (devices,
 *   batch sizes, capacities, priorities) in its constructor, and implements `name()`;
 * - `next(load, remaining)` (const) returns the next Assignment, or nothing while every
 *   device is full; greedy_next() is the library's greedy rule by priority and capacity,
 *   for a scheduler that wants it;
 * - `short_circuit(client, batch, inputs)` (const) names the device, if any, that should
 *   run a whole batch of that size, with its inputs on device `inputs`, as one direct call
 *   (no slicing, no copy: DispatchedModel takes it only when the inputs are on that
 *   device); whole_on_lone_device() is the rule of Simple, StaticHybrid and MPISimple,
 *   AdaptiveHybrid answers for a batch it timed to run faster so;
 * - `begin(client, batch)` and `observe(completion)` (noexcept, no-ops by default) are told
 *   when a dispatch begins and when each chunk completed, for schedulers that learn;
 *   `observe_dispatch(client, batch, seconds)` (noexcept) is told how long the dispatch
 *   took, whole or spread;
 * - it may declare `static constexpr bool asynchronous`: whether its devices run at
 *   once (AsyncPolicy) or one chunk at a time on the calling thread (SyncPolicy).
 *   Without it, `load_model` gives it AsyncPolicy, which runs any scheduler.
 *
 * `load_model(path, name, scheduler)` and AnyDispatchedModel accept every type that
 * models the concept, a user's own included (examples/custom_scheduler.cpp).
 */

/// @brief Whether @p S derives from Scheduler (the base itself included, for run-time types).
template <class S> inline constexpr bool is_scheduler_v = std::is_base_of_v<Scheduler, S>;

namespace detail
{
template <class S, class = void> struct has_next : std::false_type
{
};
template <class S>
struct has_next<S, std::enable_if_t<
                       std::is_same_v<decltype(std::declval<const S &>().next(
                                          std::declval<const std::vector<int64_t> &>(), int64_t{})),
                                      std::optional<Assignment>>>> : std::true_type
{
};

// A short_circuit(batch) of one argument, the form before the client was passed: it
// would hide the base's and never be called.
template <class S, class = void> struct has_old_short_circuit : std::false_type
{
};
template <class S>
struct has_old_short_circuit<
    S, std::void_t<decltype(std::declval<const S &>().short_circuit(int64_t{}))>> : std::true_type
{
};

template <class S, class = void> struct declares_asynchronous : std::false_type
{
};
template <class S>
struct declares_asynchronous<S, std::void_t<decltype(S::asynchronous)>> : std::true_type
{
};

/// S::asynchronous where S declares it, else @p otherwise.
template <class S>
constexpr bool
asynchronous_or(bool otherwise)
{
  if constexpr (declares_asynchronous<S>::value)
    return S::asynchronous;
  else
    return otherwise;
}
} // namespace detail

/**
 * @brief Checks at compile time that @p S models the scheduler concept, with a message
 * that says what is missing; `true` when it does (so it can sit in a static_assert).
 */
template <class S>
constexpr bool
check_scheduler()
{
  static_assert(is_scheduler_v<S>,
                "neml2::aoti: a scheduler must derive from neml2::aoti::Scheduler "
                "(schedulers/concept.h states the contract)");
  if constexpr (is_scheduler_v<S>)
  {
    static_assert(std::is_same_v<S, Scheduler> || !std::is_abstract_v<S>,
                  "neml2::aoti: a scheduler must implement Scheduler's pure virtual functions "
                  "(name(), next() and short_circuit())");
    static_assert(detail::has_next<S>::value,
                  "neml2::aoti: a scheduler's next(load, remaining) must be a const member "
                  "taking (const std::vector<int64_t> &, int64_t) and returning "
                  "std::optional<Assignment>");
    static_assert(!detail::has_old_short_circuit<S>::value,
                  "neml2::aoti: a scheduler's short_circuit takes (std::uint64_t client, "
                  "int64_t batch, const at::Device & inputs) and overrides Scheduler's; "
                  "short_circuit(batch) is never called");
  }
  return is_scheduler_v<S>;
}
} // namespace neml2::aoti
