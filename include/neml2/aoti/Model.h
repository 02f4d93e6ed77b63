// One compiled model bound to one device: AOTI packages plus model_meta.json.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Stub.h"
#include "neml2/aoti/artifact/read_meta.h"
#include "neml2/aoti/detail/loader.h"
#include "neml2/aoti/detail/parameters.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/detail/returns.h"
#include "neml2/aoti/detail/settings.h"
#include "neml2/aoti/detail/staging.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti
{

/**
 * @brief A compiled material model on one device.
 *
 * Loads every graph in `<artifact_path>/<device type>/` (one AOTI package
 * loader per graph) and evaluates named tensors. Inputs are `(B, *base)` or
 * unbatched `(*base)` and must live on the model's device; unbatched inputs are
 * shared by every point, and a call with no batched input returns unbatched results.
 *
 * @code
 * neml2::aoti::Model m("aoti/model_aoti.i", "model", "cpu");
 * auto out = m.forward({{"strain", at::zeros({100, 6}, at::kDouble)}});
 * at::Tensor stress = out.at("stress"); // (100, 6)
 * @endcode
 *
 * @par Thread safety
 * The calls (forward, jvp, jacobian, param_jacobian, param_vjp, run, stage, execute) may
 * overlap on one Model from several threads, as AsyncPolicy's lanes of one GPU do: each
 * graph's loader serialises its own runs. A change (set_solver_settings, a change to
 * named_parameters()) must not overlap any call.
 */
class Model
{
public:
  /**
   * @brief Load the model @p name of the stub at @p stub for @p device.
   * @param stub path of the `<model>_aoti.i` stub written by neml2-compile
   * @param name the model's block name in `[Models]`
   * @param device "cpu", "cuda" or "cuda:N"
   */
  Model(const std::string & stub, const std::string & name, const std::string & device = "cpu")
      : Model(read_stub(stub, name), detail::parse_device(device, "model '" + name + "'"))
  {
  }

  /// @brief Load from an already-read stub entry onto @p device.
  Model(const StubEntry & entry, at::Device device)
      : _device(device),
        _meta(read_meta(entry.artifact_folder / c10::DeviceTypeName(device.type(), true),
                        c10::DeviceTypeName(device.type(), true)))
  {
    if (_meta.model != entry.model)
      throw FatalError(entry.file + ": model '" + entry.model + "' points at artifacts of model '" +
                       _meta.model + "' (" + (_meta.folder / "model_meta.json").string() + ")");
    const std::string context = detail::who(_meta) + " on " + _device.str();
    guard(context,
          [&]
          {
            const c10::DeviceGuard device_guard(_device);
            for (const auto & [g, spec] : _meta.graphs)
            {
              _return_shapes[g] = detail::return_shapes(_meta, spec);
              _loaders[g] = detail::load_graph(context, g, spec.file, spec.args.size(), _device);
              if (!spec.into.empty())
                _into_loaders[g] = detail::load_graph(
                    context, g, spec.into, spec.args.size() + written_slots(spec).size(), _device);
              if (spec.per_point)
              {
                _point_return_shapes[g] = detail::return_shapes(_meta, *spec.per_point);
                _point_loaders[g] = detail::load_graph(context, g, spec.per_point->file,
                                                       spec.per_point->args.size(), _device);
              }
            }
            const auto opts = at::TensorOptions().dtype(_meta.dtype).device(_device);
            for (const auto & p : _meta.parameters)
              _parameters[p.name] = at::tensor(p.value, at::TensorOptions().dtype(at::kDouble))
                                        .reshape(p.shape)
                                        .to(opts);
            _solvers = detail::compiled_solvers(_meta);
            for (const auto & [solver, settings] : _solvers)
              _settings.merge(detail::setting_tensors(_meta, solver, settings, _device));
            warm_up();
          });
  }

  Model(const Model &) = delete;
  Model & operator=(const Model &) = delete;

  /// @brief Whether graph @p g has an in-place variant (`neml2-compile --into`), which
  /// execute() runs when given buffers for the per-point returns.
  bool writes_into(Graph g) const { return _into_loaders.count(g) != 0; }
  /// @brief Whether @p call can run the in-place variant: its graph has one, and the call
  /// runs the shared graph (a per-point parameter's call runs the per-point variant, which
  /// allocates its returns).
  bool writes_into(const detail::Call & call) const
  {
    return !call.per_point && writes_into(call.graph);
  }

  /// @brief The block name of the model.
  const std::string & name() const { return _meta.model; }
  /// @brief The device every graph runs on.
  at::Device device() const { return _device; }
  /// @brief The validated model_meta.json.
  const Meta & meta() const { return _meta; }

  /// @brief The inputs in the graphs' order: name, per-point shape (sub-batch axes first) and
  /// the sub-batch axes; a host sizes its arrays `(B, *shape)` from these.
  const std::vector<VariableSpec> & inputs() const { return _meta.inputs; }
  /// @brief The outputs in the graphs' order, as inputs() describes them.
  const std::vector<VariableSpec> & outputs() const { return _meta.outputs; }
  /// @brief The promoted parameters in the graphs' order as named_parameters() holds them now:
  /// name, shape, device and dtype. A map a call would refuse (an entry removed, or replaced by
  /// one of another shape, dtype or device) is refused here with the same FatalError.
  std::vector<ParameterInfo> parameters() const
  {
    return detail::parameter_info(_meta, _parameters, _device);
  }

  /// @brief The run-time settings of the model's Newton solves, by solver (the `[Solvers]`
  /// block names of its input file; `default` for a solve that names none); empty for an
  /// explicit model. The compiled values until set_solver_settings() changes them.
  const std::map<std::string, SolverSettings> & solver_settings() const { return _solvers; }

  /**
   * @brief Change the tolerances and iteration cap of @p solver from the next call on,
   * without recompiling.
   *
   * An unknown solver, a tolerance that is not a finite number >= 0 and an iteration cap
   * below 1 are a FatalError naming the item; nothing is changed then. Not thread-safe: call
   * it between calls, never during one.
   */
  void set_solver_settings(const std::string & solver, const SolverSettings & settings)
  {
    detail::check_solver_settings(_meta, _solvers, solver, settings);
    TensorMap tensors =
        guard([&] { return detail::who(_meta) + " on " + _device.str(); },
              [&] { return detail::setting_tensors(_meta, solver, settings, _device); });
    for (auto & [name, t] : tensors)
      _settings[name] = std::move(t);
    _solvers[solver] = settings;
  }

  /**
   * @brief Set the promoted parameter @p name to @p value, shared by every point (its
   * shape) or one value per point (`(B, *shape)`, for a parameter compiled with
   * `neml2-compile --per-point`); the next calls use it. A per-point value must have as
   * many points as each call's batch.
   *
   * The tensor is kept, not copied: changing it in place changes the next call. An unknown
   * name, or a tensor of another dtype, device or shape, is a FatalError and changes nothing.
   */
  void set_parameter(const std::string & name, const at::Tensor & value)
  {
    guard([this] { return detail::who(_meta) + " on " + _device.str(); },
          [&]
          {
            detail::set_parameter(_meta, _parameters, name, value, _device);
            return 0;
          });
  }

  /**
   * @brief The promoted parameters by name (e.g. "model.E"), on the model's device.
   *
   * Mutating a tensor in place changes the next evaluation. Baked parameters
   * are constants of the graph and do not appear.
   */
  TensorMap & named_parameters() { return _parameters; }
  /// @copydoc named_parameters()
  const TensorMap & named_parameters() const { return _parameters; }

  /// @brief Evaluate the outputs.
  TensorMap forward(const TensorMap & inputs) const
  {
    return evaluate(Graph::forward, inputs, nullptr).map;
  }

  /**
   * @brief Directional derivatives of the outputs: sum over compiled pairs of J[out][in] v[in].
   * @param inputs the inputs, batched (B, *base) or unbatched (*base)
   * @param tangents v by input name; a missing tangent is zero
   */
  TensorMap jvp(const TensorMap & inputs, const TensorMap & tangents) const
  {
    return evaluate(Graph::jvp, inputs, &tangents).map;
  }

  /// @brief The compiled Jacobian blocks, result[output][input].
  DerivMap jacobian(const TensorMap & inputs) const
  {
    return evaluate(Graph::jacobian, inputs, nullptr).deriv;
  }

  /// @brief Derivatives of the outputs with respect to the promoted parameters,
  /// result[output][param].
  DerivMap param_jacobian(const TensorMap & inputs) const
  {
    return evaluate(Graph::param_jacobian, inputs, nullptr).deriv;
  }

  /**
   * @brief Parameter adjoints: sum over the batch of cotangent . d(output)/d(param).
   * @param inputs the inputs, batched (B, *base) or unbatched (*base)
   * @param cotangents by output name; a missing cotangent is zero
   */
  TensorMap param_vjp(const TensorMap & inputs, const TensorMap & cotangents) const
  {
    return evaluate(Graph::param_vjp, inputs, &cotangents).map;
  }

  /**
   * @brief Run one graph on rows [begin, end) of a prepared call (the dispatcher's primitive).
   *
   * Arguments are sliced, moved to this device and made contiguous; parameters
   * come from named_parameters(). Returns the graph's positional returns on this
   * device, after raising ConvergenceError if the status says so. Errors are
   * not normalized here: the caller decides the context.
   */
  std::vector<at::Tensor> run(const detail::Call & call, int64_t begin, int64_t end,
                              const std::vector<at::Tensor> * into = nullptr) const
  {
    return execute(call, stage(call, begin, end), begin, end, into);
  }

  /**
   * @brief The first half of run(): the positional arguments for rows [begin, end),
   * sliced, moved to this device and made contiguous, parameters included.
   */
  std::vector<at::Tensor> stage(const detail::Call & call, int64_t begin, int64_t end) const
  {
    const c10::DeviceGuard device_guard(_device);
    std::vector<at::Tensor> args;
    args.reserve(call.args.size());
    for (std::size_t i = 0; i < call.args.size(); ++i)
    {
      const auto & slot = call.spec->args[i];
      if (slot.role == SlotSpec::Role::parameter && !slot.per_point)
        args.push_back(parameter(slot.name));
      else if (slot.role == SlotSpec::Role::setting)
        args.push_back(_settings.at(slot.name));
      else
        args.push_back(detail::chunk_arg(call, i, begin, end, _device));
    }
    return args;
  }

  /**
   * @brief The second half of run(): the graph on staged arguments, returns checked.
   * @param call the prepared call (graph, spec, the caller's tensors)
   * @param args the staged arguments, from stage()
   * @param begin first row of the chunk in the caller's batch
   * @param end one past its last row
   * @param into where writes_into(call.graph), buffers on this device for the per-point
   *        returns (detail::written_slots order, rows [begin, end), contiguous) that the
   *        in-place variant stores its results into; those returns are then the buffers.
   *        Null: the graph allocates its returns.
   */
  std::vector<at::Tensor> execute(const detail::Call & call, const std::vector<at::Tensor> & args,
                                  int64_t begin, int64_t end,
                                  const std::vector<at::Tensor> * into = nullptr) const
  {
    const c10::DeviceGuard device_guard(_device);
    void * stream = nullptr;
    if (_device.is_cuda())
    {
      const c10::impl::VirtualGuardImpl impl(_device.type());
      stream = impl.getStream(_device).native_handle();
    }
    std::vector<at::Tensor> returns;
    if (into)
    {
      if (!writes_into(call))
        throw FatalError(detail::who(_meta) + ": graph '" + graph_name(call.graph) +
                         "' has no in-place variant for this call");
      std::vector<at::Tensor> all(args);
      all.insert(all.end(), into->begin(), into->end());
      returns = _into_loaders.at(call.graph)->run(all, stream);
    }
    else
      returns = (call.per_point ? _point_loaders : _loaders).at(call.graph)->run(args, stream);
    if (returns.size() != call.spec->returns.size())
      throw FatalError(detail::who(_meta) + ": graph '" + graph_name(call.graph) + "' returned " +
                       std::to_string(returns.size()) + " tensors, model_meta.json declares " +
                       std::to_string(call.spec->returns.size()));
    detail::check_returns(_meta, _device, call, returns, end - begin,
                          (call.per_point ? _point_return_shapes : _return_shapes).at(call.graph));
    for (std::size_t i = 0; i < returns.size(); ++i)
      if (call.sum_rows[i])
        returns[i] = returns[i].sum(0);
    if (into)
    {
      // The variant returns the buffers it wrote into; keep the caller's tensors themselves.
      const auto slots = written_slots(*call.spec);
      for (std::size_t k = 0; k < slots.size(); ++k)
      {
        at::Tensor & r = returns[slots[k]];
        if (r.data_ptr() != (*into)[k].data_ptr())
          (*into)[k].copy_(r);
        r = (*into)[k];
      }
    }
    if (_meta.status)
      detail::check_status(_meta, call, returns, begin, call.batch,
                           begin == 0 && end == call.batch
                               ? std::string()
                               : " in rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                                     ") on " + _device.str());
    return returns;
  }

  /**
   * @brief One call per graph on one point of zeros, through stage() and execute() as every
   * later call, on the calling thread's current stream.
   *
   * Loading runs it once, so that no loader's first run happens concurrently with another's
   * and each graph's returns are checked against model_meta.json at load. A dispatched
   * handle with worker lanes runs it again on each lane, on the lane's own thread and
   * stream, so that no dispatch pays a lane's first use. A point that does not converge
   * counts as run.
   */
  void warm_up() const
  {
    TensorMap in;
    const auto opts = at::TensorOptions().dtype(_meta.dtype).device(_device);
    for (const auto & v : _meta.inputs)
    {
      std::vector<int64_t> shape{1};
      shape.insert(shape.end(), v.shape.begin(), v.shape.end());
      in[v.name] = at::zeros(shape, opts);
    }
    const TensorMap none; // zero tangents and cotangents
    // A per-point variant runs with every per-point parameter given for the one point.
    TensorMap points;
    for (const auto & name : _meta.per_point)
      points[name] = parameter(name).unsqueeze(0);
    const std::array<const TensorMap *, 2> variants{nullptr, &points}; // shared, per point
    for (const auto & [g, spec] : _meta.graphs)
      for (const TensorMap * params : variants)
      {
        if (params && !spec.per_point)
          continue;
        const detail::Call call =
            detail::prepare(_meta, g, in, g == Graph::forward ? nullptr : &none, params);
        const auto args = stage(call, 0, 1);
        std::vector<at::Tensor> buffers; // one point's buffers for the in-place variant
        for (const auto slot : writes_into(call) ? written_slots(spec) : std::vector<std::size_t>{})
        {
          auto shape = detail::return_base_shape(_meta, spec.returns[slot]);
          shape.insert(shape.begin(), 1);
          buffers.push_back(at::empty(shape, opts));
        }
        for (const bool into : {false, true})
          try
          {
            if (!into || writes_into(call))
              execute(call, args, 0, 1, into ? &buffers : nullptr);
          }
          catch (const ConvergenceError &)
          {
            // The graph ran and its returns passed the checks; a zero input need not converge.
          }
      }
  }

  /// @brief The return slots of @p spec with one value per point, in order: those an
  /// in-place variant takes buffers for.
  std::vector<std::size_t> written_slots(const GraphSpec & spec) const
  {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < spec.returns.size(); ++i)
      if (detail::combine_of(_meta, spec.returns[i]) == detail::Combine::concat)
        out.push_back(i);
    return out;
  }

private:
  /// The parameter tensor, checked: the user may have replaced it in the map.
  const at::Tensor & parameter(const std::string & name) const
  {
    return detail::checked_parameter(_meta, _parameters, *_meta.find(_meta.parameters, name),
                                     _device);
  }

  detail::Named evaluate(Graph g, const TensorMap & inputs, const TensorMap * extra) const
  {
    return guard([this] { return detail::who(_meta) + " on " + _device.str(); },
                 [&]
                 {
                   detail::check_parameter_names(_meta, _parameters);
                   const detail::Call call = detail::prepare(_meta, g, inputs, extra, &_parameters);
                   if (call.device != _device)
                     throw FatalError(detail::who(_meta) + ": inputs are on " + call.device.str() +
                                      " but the model runs on " + _device.str());
                   auto returns = call.batch == 0 ? detail::empty_returns(_meta, call)
                                                  : run(call, 0, call.batch);
                   return detail::finish(call, std::move(returns));
                 });
  }

  at::Device _device;
  Meta _meta;
  std::map<Graph, std::unique_ptr<torch::inductor::AOTIModelPackageLoader>> _loaders;
  std::map<Graph, std::unique_ptr<torch::inductor::AOTIModelPackageLoader>> _into_loaders;
  std::map<Graph, std::vector<std::vector<int64_t>>> _return_shapes; // detail::return_shapes
  /// The per-point variants (`neml2-compile --per-point`) and their return shapes.
  std::map<Graph, std::unique_ptr<torch::inductor::AOTIModelPackageLoader>> _point_loaders;
  std::map<Graph, std::vector<std::vector<int64_t>>> _point_return_shapes;
  TensorMap _parameters;
  std::map<std::string, SolverSettings> _solvers; // by solver, what _settings holds
  TensorMap _settings;                            // the `setting` arguments, on _device
};
} // namespace neml2::aoti
