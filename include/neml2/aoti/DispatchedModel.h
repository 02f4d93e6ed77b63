// DispatchedModel: chunk a batch, run the chunks on the scheduler's devices, stitch the results.
#pragma once

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
#include "neml2/aoti/artifact/Stub.h"
#include "neml2/aoti/chunking.h"
#include "neml2/aoti/detail/Trace.h"
#include "neml2/aoti/execution/policies.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti
{
/// @brief What the last call of a DispatchedModel did (for tests, tuning and tracing).
struct DispatchInfo
{
  bool short_circuit = false;             ///< ran as one direct Model call: no slicing, no copy
  std::size_t chunks = 0;                 ///< chunks run (0 for a short circuit or B = 0)
  std::vector<std::size_t> device_chunks; ///< chunks run per scheduler device
  std::size_t parameter_syncs = 0;        ///< device parameter copies refreshed from the master map
};

/**
 * @brief Called on the thread that runs a chunk, just before the chunk's graph runs.
 *
 * For instrumentation and fault injection: an exception it throws is handled
 * exactly like a failure of that chunk. Arguments: the device, the chunk's
 * ordinal in dispatch order, and its rows [begin, end).
 */
using ChunkHook =
    std::function<void(const at::Device & device, std::size_t ordinal, int64_t begin, int64_t end)>;

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
 * auto sched = std::make_shared<SimpleScheduler>(SimpleScheduler::Config{"cpu", 4096});
 * DispatchedModel<SyncPolicy<Simple>> m("aoti/model_aoti.i", "model", sched);
 * auto out = m.forward({{"strain", strain}});
 * @endcode
 */
template <class Policy = PassThrough>
class DispatchedModel
{
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
    set_trace(detail::Trace::path_from_env());
  }

  /**
   * @brief Load the model @p name of @p stub once per device of @p scheduler.
   * @param stub the `<model>_aoti.i` written by neml2-compile
   * @param name the model's block name
   * @param scheduler the devices and chunk sizes; shared, read only
   */
  template <class P = Policy, std::enable_if_t<!std::is_same_v<P, PassThrough>, int> = 0>
  DispatchedModel(const std::string & stub,
                  const std::string & name,
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
    set_trace(detail::Trace::path_from_env());
  }

  /// @brief The validated model_meta.json (of the first device).
  const Meta & meta() const { return _s->models.front()->meta(); }
  /// @brief The model's block name.
  const std::string & name() const { return meta().model; }
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
   * and the whole call on a "dispatch" track; the file is rewritten after each call
   * and opens in Perfetto. Models tracing to the same path share one file. Tracing waits for a GPU's stream between phases, so it
   * shows where time goes at the price of overlap. The environment variable
   * NEML2_TRACE sets the path for every model at construction.
   */
  void set_trace(const std::string & path)
  {
    _s->trace = path.empty() ? nullptr : detail::Trace::open(path);
  }

  /// @brief Install (or clear, with an empty function) the per-chunk hook. @see ChunkHook
  void set_chunk_hook(ChunkHook hook) { _s->hook = std::move(hook); }

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

private:
  struct State
  {
    std::vector<std::unique_ptr<Model>> models;
    std::optional<Policy> policy;
    TensorMap master;
    // Per device: parameter name -> (tensor identity, version) last copied.
    std::vector<std::map<std::string, std::pair<const void *, int64_t>>> synced;
    DispatchInfo info;
    ChunkHook hook;
    std::shared_ptr<detail::Trace> trace;
  };

  /// Refresh each device's parameter copies whose master tensor changed since the last call.
  void sync_parameters()
  {
    const Meta & m = meta();
    detail::check_parameter_names(m, _s->master);
    for (std::size_t i = 0; i < _s->models.size(); ++i)
    {
      Model & model = *_s->models[i];
      for (const auto & spec : m.parameters)
      {
        const auto it = _s->master.find(spec.name);
        if (it == _s->master.end())
          throw FatalError(detail::who(m) + ": parameter '" + spec.name +
                           "' was removed from named_parameters()");
        const at::Tensor & t = it->second;
        if (!t.defined() || t.scalar_type() != m.dtype || !t.sizes().equals(spec.shape) ||
            !(t.is_cpu() || t.is_cuda()))
          throw FatalError(detail::who(m) + ": parameter '" + spec.name +
                           "' must stay a tensor of shape " + detail::shape_str(spec.shape) +
                           " and dtype " + c10::toString(m.dtype) + ", on cpu or cuda");
        const std::pair<const void *, int64_t> key{t.unsafeGetTensorImpl(),
                                                   t.is_inference() ? -1 : t._version()};
        auto & last = _s->synced[i][spec.name];
        if (key.second >= 0 && last == key)
          continue;
        if (model.device() == t.device())
          model.named_parameters()[spec.name] = t; // share, no copy
        else
          model.named_parameters()[spec.name] = t.to(model.device());
        last = key;
        ++_s->info.parameter_syncs;
      }
    }
  }

  detail::Named dispatch(Graph g, const TensorMap & inputs, const TensorMap * extra = nullptr)
  {
    detail::Trace * trace = _s->trace.get();
    if (!trace)
      return dispatch_impl(g, inputs, extra);
    const double t0 = trace->now_us();
    try
    {
      auto out = dispatch_impl(g, inputs, extra);
      trace->add_call(graph_name(g), t0, trace->now_us(), _s->info.chunks);
      trace->flush();
      return out;
    }
    catch (const Exception &)
    {
      trace->add_call(graph_name(g), t0, trace->now_us(), _s->info.chunks);
      try
      {
        trace->flush();
      }
      catch (const Exception &)
      {
        // The dispatch error is the one to report.
      }
      throw;
    }
  }

  /// One chunk on @p model: the graph's returns, with its phases traced when tracing is on.
  std::vector<at::Tensor> run_chunk(const Model & model, const detail::Call & call,
                                    std::size_t ordinal, int64_t begin, int64_t end,
                                    Gather * gather)
  {
    detail::Trace * trace = _s->trace.get();
    if (!trace)
    {
      auto returns = model.run(call, begin, end);
      if (gather)
        gather->add(ordinal, begin, end, returns);
      return returns;
    }
    const at::Device & dev = model.device();
    const double t0 = trace->now_us();
    const auto args = model.stage(call, begin, end);
    detail::sync_stream(dev);
    const double t1 = trace->now_us();
    auto returns = model.execute(call, args, begin, end);
    detail::sync_stream(dev);
    const double t2 = trace->now_us();
    trace->add("copy in", dev, t0, t1, begin, end, ordinal);
    trace->add("compute", dev, t1, t2, begin, end, ordinal);
    if (gather)
    {
      gather->add(ordinal, begin, end, returns);
      trace->add("copy out", dev, t2, trace->now_us(), begin, end, ordinal);
    }
    return returns;
  }

  detail::Named dispatch_impl(Graph g, const TensorMap & inputs, const TensorMap * extra)
  {
    const Meta & m = meta();
    return guard([&m] { return detail::who(m); },
                 [&]
                 {
                   _s->info = DispatchInfo{};
                   _s->info.device_chunks.assign(_s->models.size(), 0);
                   Model & first = *_s->models.front();
                   if constexpr (pass_through)
                   {
                     _s->info.short_circuit = true;
                     if (_s->hook)
                       _s->hook(first.device(), 0, 0, detail::prepare(m, g, inputs, extra).batch);
                     return call_model(first, g, inputs, extra);
                   }
                   else
                   {
                     const detail::Call call = detail::prepare(m, g, inputs, extra);
                     sync_parameters();
                     const auto & sched = _s->policy->scheduler();
                     if (call.batch == 0)
                       return detail::finish(call, detail::empty_returns(m, call));
                     const int64_t bs = sched.batch_sizes().front();
                     if (_s->models.size() == 1 && first.device() == call.device &&
                         (bs == 0 || call.batch <= bs))
                     {
                       _s->info.short_circuit = true;
                       if (_s->hook)
                         _s->hook(first.device(), 0, 0, call.batch);
                       return detail::finish(call,
                                             run_chunk(first, call, 0, 0, call.batch, nullptr));
                     }
                     bool gpu = false;
                     for (const auto & model : _s->models)
                       gpu = gpu || model->device().is_cuda();
                     Gather gather(m, call, gpu);
                     auto & info = _s->info;
                     std::mutex info_mutex;
                     _s->policy->execute(
                         call.batch,
                         [&](std::size_t dev, std::size_t ordinal, int64_t begin, int64_t end)
                         {
                           const Model & model = *_s->models[dev];
                           try
                           {
                             if (_s->hook)
                               _s->hook(model.device(), ordinal, begin, end);
                             run_chunk(model, call, ordinal, begin, end, &gather);
                           }
                           catch (...)
                           {
                             rethrow_normalized(
                                 detail::who(m) + " on " + model.device().str() + ", rows [" +
                                 std::to_string(begin) + ", " + std::to_string(end) + ")");
                           }
                           const std::lock_guard<std::mutex> lock(info_mutex);
                           ++info.device_chunks[dev];
                         });
                     for (const auto n : info.device_chunks)
                       info.chunks += n;
                     return detail::finish(call, gather.finish());
                   }
                 });
  }

  /// The pass-through path: exactly the Model's own entry point.
  static detail::Named
  call_model(const Model & model, Graph g, const TensorMap & inputs, const TensorMap * extra)
  {
    detail::Named out;
    switch (g)
    {
      case Graph::forward:
        out.map = model.forward(inputs);
        break;
      case Graph::jvp:
        out.map = model.jvp(inputs, *extra);
        break;
      case Graph::jacobian:
        out.deriv = model.jacobian(inputs);
        break;
      case Graph::param_jacobian:
        out.deriv = model.param_jacobian(inputs);
        break;
      case Graph::param_vjp:
        out.map = model.param_vjp(inputs, *extra);
        break;
    }
    return out;
  }

  std::unique_ptr<State> _s;
};
} // namespace neml2::aoti
