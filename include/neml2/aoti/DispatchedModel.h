// DispatchedModel: chunk a batch, run the chunks on the scheduler's devices, stitch the results.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/Model.h"
#include "neml2/aoti/Observer.h"
#include "neml2/aoti/artifact/Stub.h"
#include "neml2/aoti/detail/observers.h"
#include "neml2/aoti/detail/results.h"
#include "neml2/aoti/execution/policies.h"
#include "neml2/aoti/gather.h"
#include "neml2/aoti/observers/ChromeTrace.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti
{
/**
 * @brief A Model-shaped handle that spreads each call over the devices of a scheduler.
 *
 * The execution policy, chosen by type, says how chunks run:
 * `DispatchedModel<SyncPolicy<Simple>>` loops on the calling thread,
 * `DispatchedModel<AsyncPolicy<StaticHybrid>>` drives a thread per device, and
 * `DispatchedModel<PassThrough>` (no scheduler) calls the CPU Model directly.
 *
 * Every entry point accepts `(B, *base)` or unbatched `(*base)` inputs on one
 * device and returns results on that device: per-point results concatenated in
 * batch order, batch-independent Jacobian blocks once and unbatched, parameter
 * adjoints summed over chunks. Per-point results equal the direct single-device
 * call bitwise. Errors follow the contract in Exception.h; after an error the
 * model is ready for the next call and the caller's tensors are untouched.
 *
 * @code
 * auto sched = std::make_shared<Simple>(Simple::Config{"cpu", 4096});
 * DispatchedModel<SyncPolicy<Simple>> m("aoti/model_aoti.i", "model", sched);
 * auto out = m.forward({{"strain", strain}});
 * @endcode
 *
 * @par Thread safety
 * One thread at a time per handle: a call (forward, jvp, jacobian, param_jacobian,
 * param_vjp, in either form) and a change (set_trace, set_chunk_hook, add_observer,
 * remove_observer, set_solver_settings, sync_parameters, release_buffers, a change to
 * named_parameters()) must not overlap another call or change on the same handle. The
 * accessors (meta, inputs, outputs, parameters, solver_settings, last_dispatch, model,
 * policy) may be read from several threads while no call or change runs. Handles are
 * independent: each host thread may call its own handle at the same time as the others,
 * and handles may share one scheduler. Under AsyncPolicy the chunks run on the handle's
 * own worker threads, which call its observers (DispatchObserver says from where).
 */
template <class Policy = PassThrough> class DispatchedModel
{
  static_assert(is_execution_policy_v<Policy>,
                "DispatchedModel<P>: P must be an execution policy (PassThrough, SyncPolicy<S> or "
                "AsyncPolicy<S>); for a scheduler S write DispatchedModel<default_policy_t<S>>");
  static constexpr bool pass_through = std::is_same_v<Policy, PassThrough>;

public:
  /// @brief The execution policy.
  using policy_type = Policy;

  /// @brief No scheduler: a pass-through to the Model on the CPU.
  template <class P = Policy, std::enable_if_t<std::is_same_v<P, PassThrough>, int> = 0>
  DispatchedModel(const std::string & stub, const std::string & name)
      : _s(std::make_unique<State>())
  {
    _s->models.push_back(std::make_unique<Model>(stub, name, "cpu"));
    set_trace(ChromeTraceFile::path_from_env());
  }

  /**
   * @brief Load the model @p name of @p stub once per device of @p scheduler.
   * @param stub the `<model>_aoti.i` written by neml2-compile
   * @param name the model's block name
   * @param scheduler the devices and chunk sizes; shared, read only
   */
  template <class P = Policy, std::enable_if_t<!std::is_same_v<P, PassThrough>, int> = 0>
  DispatchedModel(const std::string & stub, const std::string & name,
                  std::shared_ptr<typename P::scheduler_type> scheduler)
      : _s(std::make_unique<State>())
  {
    if (!scheduler)
      throw FatalError("load_model: the scheduler is null");
    const StubEntry entry = read_stub(stub, name);
    for (const auto & d : scheduler->devices())
      _s->models.push_back(std::make_unique<Model>(entry, d));
    // The master parameters live on the CPU, initialised from the artifact.
    for (const auto & [pname, value] : _s->models.front()->named_parameters())
      _s->master[pname] = value.to(at::kCPU).clone();
    _s->synced.resize(_s->models.size());
    _s->policy.emplace(std::move(scheduler));
    if constexpr (Policy::asynchronous)
      guard([this] { return detail::who(meta()); },
            [this]
            {
              _s->policy->on_every_lane([this](DeviceIndex d) { _s->models[d]->warm_up(); });
              return 0;
            });
    set_trace(ChromeTraceFile::path_from_env());
  }

  /// @brief The validated model_meta.json (of the first device).
  const Meta & meta() const { return _s->models.front()->meta(); }
  /// @brief The model's block name.
  const std::string & name() const { return meta().model; }
  /// @brief The inputs in the graphs' order: name, per-point shape (sub-batch axes first) and
  /// the sub-batch axes; a host sizes its arrays `(B, *shape)` from these.
  const std::vector<VariableSpec> & inputs() const { return meta().inputs; }
  /// @brief The outputs in the graphs' order, as inputs() describes them.
  const std::vector<VariableSpec> & outputs() const { return meta().outputs; }
  /**
   * @brief The promoted parameters in the graphs' order as named_parameters() holds them now:
   * name, shape, device and dtype (the master copy, on the CPU unless replaced by a tensor on a
   * GPU; each device gets its own copy before a call). A map a call would refuse is refused
   * here with the same FatalError.
   */
  std::vector<ParameterInfo> parameters() const
  {
    if constexpr (pass_through)
      return _s->models.front()->parameters();
    else
      return detail::parameter_info(meta(), _s->master, std::nullopt);
  }
  /// @brief The run-time settings of the model's Newton solves, by solver
  /// (Model::solver_settings()); the same on every device.
  const std::map<std::string, SolverSettings> & solver_settings() const
  {
    return _s->models.front()->solver_settings();
  }
  /**
   * @brief Change the tolerances and iteration cap of @p solver on every device from the next
   * call on (Model::set_solver_settings()). Checked once before any device changes, so a
   * refused setting changes none. Not thread-safe: call it between calls, never during one.
   */
  void set_solver_settings(const std::string & solver, const SolverSettings & settings)
  {
    const Model & first = *_s->models.front();
    detail::check_solver_settings(first.meta(), first.solver_settings(), solver, settings);
    for (auto & model : _s->models)
      model->set_solver_settings(solver, settings);
  }
  /// @brief The per-device models, in scheduler device order.
  const Model & model(std::size_t device = 0) const { return *_s->models.at(device); }
  /// @brief Number of devices.
  std::size_t num_devices() const { return _s->models.size(); }
  /// @brief What the last call did.
  const DispatchInfo & last_dispatch() const { return _s->info; }

  /**
   * @brief Record every call into a Chrome-trace JSON file at @p path ("" stops recording).
   *
   * Per chunk: "copy in", "compute" and "copy out" on one track per worker thread,
   * and the whole call on a "dispatch" track; the events of each call are appended to
   * the file after it, and the file opens in Perfetto. Models tracing to the same path
   * share one file. The trace keeps the latest 2^20 events (NEML2_TRACE_EVENTS sets
   * how many); beyond that the file says how many earlier ones it dropped. Tracing
   * waits for a GPU's stream between phases, so it shows where time goes at the price
   * of overlap. The environment variable NEML2_TRACE sets the path for every model at
   * construction. It is one DispatchObserver among those attached.
   */
  void set_trace(const std::string & path)
  {
    _s->observers.set_trace(path.empty() ? nullptr : std::make_shared<ChromeTrace>(path));
  }

  /// @brief Install (or clear, with an empty function) the per-chunk hook. @see ChunkHook
  void set_chunk_hook(ChunkHook hook) { _s->observers.set_hook(std::move(hook)); }

  /**
   * @brief Attach @p observer to every later call (after the chunk hook and the trace,
   * in the order attached). @see DispatchObserver
   */
  void add_observer(std::shared_ptr<DispatchObserver> observer)
  {
    if (!observer)
      throw FatalError("add_observer: the observer is null");
    _s->observers.add(std::move(observer));
  }

  /// @brief Detach @p observer (nothing if it is not attached).
  void remove_observer(const std::shared_ptr<DispatchObserver> & observer)
  {
    _s->observers.remove(observer);
  }

  /**
   * @brief Set the promoted parameter @p name to @p value for the next calls: shared by every
   * point (its shape), or one value per point (`(B, *shape)`, for a parameter compiled with
   * `neml2-compile --per-point`), on the CPU or a GPU. A per-point value is sliced with each
   * chunk and travels with it, as the inputs do; a shared one is copied to each device once.
   * The tensor is kept, not copied. An unknown name or a tensor a call would refuse is a
   * FatalError and changes nothing. @see Model::set_parameter
   */
  void set_parameter(const std::string & name, const at::Tensor & value)
  {
    if constexpr (pass_through)
      _s->models.front()->set_parameter(name, value);
    else
      guard([this] { return detail::who(meta()); },
            [&]
            {
              detail::set_parameter(meta(), _s->master, name, value, std::nullopt);
              return 0;
            });
  }

  /**
   * @brief The single master map of promoted parameters.
   *
   * Mutate in place (`m.named_parameters().at("model.E").fill_(150e3)`) or
   * replace an entry; each device copy is refreshed before the next call, and
   * only when the tensor changed.
   */
  TensorMap & named_parameters()
  {
    if constexpr (pass_through)
      return _s->models.front()->named_parameters();
    else
      return _s->master;
  }

  /// @brief The execution policy (not available for PassThrough).
  template <class P = Policy, std::enable_if_t<!std::is_same_v<P, PassThrough>, int> = 0>
  const P & policy() const
  {
    return *_s->policy;
  }

  /// @brief Evaluate the outputs. @see Model::forward
  TensorMap forward(const TensorMap & inputs) { return dispatch(Graph::forward, inputs).map; }
  /// @brief Output tangents for input tangents. @see Model::jvp
  TensorMap jvp(const TensorMap & inputs, const TensorMap & tangents)
  {
    return dispatch(Graph::jvp, inputs, &tangents).map;
  }
  /// @brief Jacobian blocks result[output][input]. @see Model::jacobian
  DerivMap jacobian(const TensorMap & inputs) { return dispatch(Graph::jacobian, inputs).deriv; }
  /// @brief Parameter Jacobian blocks result[output][param]. @see Model::param_jacobian
  DerivMap param_jacobian(const TensorMap & inputs)
  {
    return dispatch(Graph::param_jacobian, inputs).deriv;
  }
  /// @brief Parameter adjoints summed over the batch. @see Model::param_vjp
  TensorMap param_vjp(const TensorMap & inputs, const TensorMap & cotangents)
  {
    return dispatch(Graph::param_vjp, inputs, &cotangents).map;
  }

  /**
   * @name Results into caller-owned buffers
   *
   * Each entry point also writes into tensors the caller provides: an entry of @p results
   * (by output name; by [output][input or parameter] for derivative blocks) is a buffer
   * the result is written into, and every result without one is inserted into the map.
   * A buffer has the result's shape, the model's dtype and the inputs' device, any
   * strides (a host array wrapped with `at::from_blob` is fine), and shares no memory with
   * an input or another buffer; anything else, or a name the graph does not return, is a
   * FatalError naming the buffer, raised before anything runs. A chunk's result is copied
   * into its rows of the buffer once, as it would be into a result the model allocates;
   * where one device computes the whole batch, the graph's result is copied once. If the
   * call fails, the buffers may hold part of the results and the map gains no entry.
   *
   * @code
   * std::vector<double> stress(B * 6); // the host code's own array
   * TensorMap out{{"stress", at::from_blob(stress.data(), {B, 6}, at::kDouble)}};
   * m.forward({{"strain", strain}}, out); // stress now holds the results
   * @endcode
   * @{
   */
  /// @brief forward() into @p results.
  void forward(const TensorMap & inputs, TensorMap & results)
  {
    dispatch(Graph::forward, inputs, nullptr, detail::Into{&results, nullptr});
  }
  /// @brief jvp() into @p results.
  void jvp(const TensorMap & inputs, const TensorMap & tangents, TensorMap & results)
  {
    dispatch(Graph::jvp, inputs, &tangents, detail::Into{&results, nullptr});
  }
  /// @brief jacobian() into @p results.
  void jacobian(const TensorMap & inputs, DerivMap & results)
  {
    dispatch(Graph::jacobian, inputs, nullptr, detail::Into{nullptr, &results});
  }
  /// @brief param_jacobian() into @p results.
  void param_jacobian(const TensorMap & inputs, DerivMap & results)
  {
    dispatch(Graph::param_jacobian, inputs, nullptr, detail::Into{nullptr, &results});
  }
  /// @brief param_vjp() into @p results.
  void param_vjp(const TensorMap & inputs, const TensorMap & cotangents, TensorMap & results)
  {
    dispatch(Graph::param_vjp, inputs, &cotangents, detail::Into{&results, nullptr});
  }
  /// @}

  /**
   * @brief Drop the host result buffers the model keeps for reuse.
   *
   * A call that gathers chunks into host memory reuses the buffer of its previous result
   * of the same graph and shape once the caller no longer holds that result (no tensor or
   * view of it is alive); a result the caller holds is never written again. This frees
   * those kept buffers (at most one per graph return). A raw pointer into a result is
   * valid only while a tensor of that result lives.
   */
  void release_buffers() { _s->pool.clear(); }

private:
  struct State
  {
    std::vector<std::unique_ptr<Model>> models;
    std::optional<Policy> policy;
    TensorMap master;
    // Per device: parameter name -> (tensor identity, version) last copied.
    std::vector<std::map<std::string, std::pair<const void *, int64_t>>> synced;
    DispatchInfo info;
    detail::ObserverSet observers; // the chunk hook, the trace, the user's
    detail::ResultPool pool;       // host result buffers, reused once the caller drops them
  };

  /// Refresh each device's parameter copies whose master tensor changed since the last call.
  void sync_parameters();

  /// The call with the observers told that it begins and ends (dispatch_impl does it).
  detail::Named dispatch(Graph g, const TensorMap & inputs, const TensorMap * extra = nullptr,
                         const detail::Into & into = {});

  /// One chunk on @p model: the graph's returns, with the observers told (and its phases
  /// timed when one of them wants it). An exception from on_chunk_begin fails the chunk.
  /// A graph with an in-place variant stores the chunk straight into its rows of the
  /// gathered results, or into @p whole (a short circuit's buffers, when given).
  std::vector<at::Tensor> run_chunk(const Model & model, const detail::Call & call,
                                    std::size_t ordinal, int64_t begin, int64_t end,
                                    Gather * gather,
                                    const std::vector<at::Tensor> * whole = nullptr);

  /// The call, its results put into the caller's buffers and maps when @p into names any
  /// (then the returned Named is empty).
  detail::Named dispatch_impl(Graph g, const TensorMap & inputs, const TensorMap * extra,
                              const detail::Into & into, bool * begun = nullptr);

  /// The call itself; with @p bound (a call already prepared, and the caller's buffers),
  /// per-point results go into those buffers.
  detail::Named run_call(Graph g, const TensorMap & inputs, const TensorMap * extra,
                         const detail::Bound * bound, bool * begun);

  /// The buffers a short circuit on @p model stores its per-point returns in (whole_buffers()
  /// in DispatchedModel_impl.h says which).
  std::vector<at::Tensor> whole_buffers(const Model & model, const detail::Call & call,
                                        const std::vector<at::Tensor> * targets);

  /// Tell the observers that a call on @p batch points begins.
  void begin_dispatch(Graph g, int64_t batch, bool * begun);

  /// The pass-through path: exactly the Model's own entry point.
  static detail::Named call_model(const Model & model, Graph g, const TensorMap & inputs,
                                  const TensorMap * extra);

  std::unique_ptr<State> _s;
};
} // namespace neml2::aoti

#include "neml2/aoti/detail/DispatchedModel_impl.h"
