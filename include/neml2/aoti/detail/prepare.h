// Turning named user tensors into one validated graph call (Call), with the messages that
// name the model, its variables and its graphs.
#pragma once

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/detail/env.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/// How the dispatcher combines one return slot across chunks.
enum class Combine
{
  concat, ///< per-point: written into its batch slice
  once,   ///< batch-independent: identical in every chunk, kept once
  sum,    ///< adjoint: summed over chunks
  status  ///< convergence status: checked per chunk, not returned
};

/// One validated call of one graph on the full batch, before slicing.
struct Call
{
  Graph graph = Graph::forward;     ///< which graph
  const GraphSpec * spec = nullptr; ///< its signature
  int64_t batch = 0;                ///< B (1 when nothing is batched)
  bool batched = false;             ///< whether any argument carries the batch dimension
  at::Device device = at::kCPU;     ///< where the user's tensors live
  std::vector<at::Tensor> args;     ///< by position; parameters are left undefined
  std::vector<bool> arg_batched;    ///< per argument: has the leading batch dimension
  std::vector<Combine> combine;     ///< per return slot
  /// The graph's per-point variant runs (a per-point parameter holds one value per point):
  /// @ref spec is that variant, and its per-point parameter arguments are in @ref args.
  bool per_point = false;
  /// Per return slot: the per-point adjoint of a parameter given shared, which each chunk
  /// sums over its rows (Model::execute) before the chunks' sums are added (Combine::sum).
  std::vector<bool> sum_rows;
};

/// The message prefix naming the model.
inline std::string
who(const Meta & meta)
{
  return "model '" + meta.model + "'";
}

inline std::string
shape_str(at::IntArrayRef s)
{
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

/// "(B, 6)" for a base shape (6,): the shape of one value per point of B points.
inline std::string
points_shape_str(at::IntArrayRef base)
{
  std::string out = "(B";
  for (const auto d : base)
    out += ", " + std::to_string(d);
  return out + (base.empty() ? ",)" : ")");
}

/// Whether @p t is one value per point of the parameter @p spec, `(B, *shape)`, and @p meta
/// compiled that parameter per point.
inline bool
per_point_value(const Meta & meta, const VariableSpec & spec, const at::Tensor & t)
{
  const auto base = at::IntArrayRef(spec.shape);
  return meta.per_point_capable(spec.name) && t.defined() && t.dim() == int64_t(base.size()) + 1 &&
         t.sizes().slice(1).equals(base);
}

/**
 * The FatalError for a tensor @p t that the promoted parameter @p spec cannot hold (another
 * shape, dtype or device; @p device: where it must be, or none for any CPU or CUDA device),
 * or null when it can. A per-point value for a parameter compiled without `--per-point`
 * says which flag compiles it.
 */
inline std::optional<FatalError>
parameter_refusal(const Meta & meta, const VariableSpec & spec, const at::Tensor & t,
                  const std::optional<at::Device> & device)
{
  const bool placed =
      device ? t.defined() && t.device() == *device : t.defined() && (t.is_cpu() || t.is_cuda());
  const auto base = at::IntArrayRef(spec.shape);
  const bool points = per_point_value(meta, spec, t);
  if (t.defined() && t.scalar_type() == meta.dtype && placed && (points || t.sizes().equals(base)))
    return std::nullopt;
  const bool capable = meta.per_point_capable(spec.name);
  const std::string shape =
      capable ? shape_str(base) + " or " + points_shape_str(base) + " per point" : shape_str(base);
  // One more leading dimension: the user meant one value per point.
  const bool meant_points = !capable && t.defined() && t.dim() == int64_t(base.size()) + 1 &&
                            t.sizes().slice(1).equals(base);
  return FatalError(
      who(meta) + ": parameter '" + spec.name + "' must stay a tensor of shape " + shape +
      (device ? ", " + std::string(c10::toString(meta.dtype)) + ", on " + device->str()
              : " and dtype " + std::string(c10::toString(meta.dtype)) + ", on cpu or cuda") +
      (meant_points ? ": it was not compiled per point; add --per-point " + spec.original() +
                          " to neml2-compile"
                    : ""));
}

/// ", of which (3,) are sub-batch axes" for a variable with sub-batch axes, else "".
inline std::string
sub_batch_note(const VariableSpec & var)
{
  if (var.sub_batch.empty())
    return "";
  return ", of which " + shape_str(var.sub_batch) + " are sub-batch axes";
}

inline std::string
names(const std::vector<VariableSpec> & vars)
{
  std::string out;
  for (const auto & v : vars)
    out += (out.empty() ? "" : ", ") + v.name;
  return out.empty() ? "none" : out;
}

/// "; 'strain' is now called 'eps' (neml2-compile --rename-input)" when @p name is the
/// original name of an entry of @p vars that neml2-compile renamed, else "". @p flag names
/// the option that renamed it.
inline std::string
renamed_note(const Meta & meta, const std::vector<VariableSpec> & vars, const std::string & name,
             const char * flag)
{
  const auto * var = meta.find_renamed(vars, name);
  if (!var)
    return "";
  return "; '" + name + "' is now called '" + var->name + "' (neml2-compile " + flag + ")";
}

/// The FatalError for a graph that was not compiled, telling which flag adds it, or that
/// neml2-compile's --graphs left it out although -d and -p asked for it.
inline FatalError
missing_graph(const Meta & meta, Graph g)
{
  const bool param = g == Graph::param_jacobian || g == Graph::param_vjp;
  const bool pairs = !meta.derivatives.empty(), params = !meta.parameters.empty();
  std::string hint;
  if ((pairs || g == Graph::param_vjp) && (params || !param))
    hint = std::string("neml2-compile --graphs left it out: add ") + graph_name(g) +
           " to --graphs (or leave --graphs out)";
  else if (!param)
    hint = "add '-d :' (or -d OUTPUT:INPUT) to neml2-compile";
  else if (!params)
    hint = "no parameter was promoted: add '-p :' (or -p NAME) to neml2-compile";
  else
    hint = "add '-d :' and '-p :' to neml2-compile";
  return FatalError(who(meta) + ": graph '" + graph_name(g) + "' was not compiled: " + hint);
}

/// Whether the derivative block d(of)/d(wrt) comes with a batch dimension.
inline bool
derivative_batched(const Meta & meta, const std::string & of, const std::string & wrt)
{
  for (const auto * list : {&meta.derivatives, &meta.param_derivatives})
    for (const auto & d : *list)
      if (d.of == of && d.wrt == wrt)
        return d.batched;
  return true;
}

/**
 * Whether @p params holds a per-point-capable parameter of @p meta with one value per point
 * (a leading batch dimension); the graphs' per-point variants then run. The tensors are
 * checked where they are read.
 */
inline bool
any_per_point(const Meta & meta, const TensorMap & params)
{
  for (const auto & name : meta.per_point)
  {
    const auto it = params.find(name);
    if (it != params.end() && per_point_value(meta, *meta.find(meta.parameters, name), it->second))
      return true;
  }
  return false;
}

/// The position of per-point parameter @p name among the arguments of @p spec.
inline std::size_t
per_point_arg(const GraphSpec & spec, const std::string & name)
{
  for (std::size_t i = 0; i < spec.args.size(); ++i)
    if (spec.args[i].per_point && spec.args[i].name == name)
      return i;
  throw FatalError("per-point parameter '" + name + "' is not an argument of its graph");
}

/// How return slot @p s combines across chunks.
inline Combine
combine_of(const Meta & meta, const SlotSpec & s)
{
  switch (s.role)
  {
    case SlotSpec::Role::adjoint:
      return s.per_point ? Combine::concat : Combine::sum;
    case SlotSpec::Role::converged:
    case SlotSpec::Role::residual:
      return Combine::status;
    case SlotSpec::Role::derivative:
      return s.batched.value_or(derivative_batched(meta, s.of, s.wrt)) ? Combine::concat
                                                                       : Combine::once;
    default:
      return Combine::concat;
  }
}

/// The base shape of return slot @p s (the shape without the batch dimension).
inline std::vector<int64_t>
return_base_shape(const Meta & meta, const SlotSpec & s)
{
  const auto base = [&](const std::vector<VariableSpec> & list, const std::string & n)
  {
    const auto * v = meta.find(list, n);
    return v ? v->shape : std::vector<int64_t>{};
  };
  switch (s.role)
  {
    case SlotSpec::Role::output:
    case SlotSpec::Role::tangent:
      return base(meta.outputs, s.name);
    case SlotSpec::Role::adjoint:
      return base(meta.parameters, s.name);
    case SlotSpec::Role::derivative:
    {
      auto shape = base(meta.outputs, s.of);
      const auto * in = meta.find(meta.inputs, s.wrt);
      const auto wrt = in ? in->shape : base(meta.parameters, s.wrt);
      shape.insert(shape.end(), wrt.begin(), wrt.end());
      return shape;
    }
    default:
      return {};
  }
}

/**
 * Validate the user's tensors against the graph's signature and collect them in
 * positional order. @p extra holds tangents (jvp) or cotangents (param_vjp);
 * a missing one is zero. Every mistake is a FatalError naming the model and the item.
 */
inline Call
prepare(const Meta & meta, Graph g, const TensorMap & inputs, const TensorMap * extra = nullptr,
        const TensorMap * params = nullptr)
{
  const auto it = meta.graphs.find(g);
  if (it == meta.graphs.end())
    throw missing_graph(meta, g);
  Call call;
  call.graph = g;
  call.spec = &it->second;
  call.per_point = params && it->second.per_point && any_per_point(meta, *params);
  if (call.per_point)
    call.spec = &*it->second.per_point;

  for (const auto & [name, t] : inputs)
    if (!meta.find(meta.inputs, name))
      throw FatalError(who(meta) + ": unknown input '" + name +
                       "' (expected inputs: " + names(meta.inputs) + ")" +
                       renamed_note(meta, meta.inputs, name, "--rename-input"));
  const SlotSpec::Role extra_role =
      g == Graph::jvp ? SlotSpec::Role::tangent : SlotSpec::Role::cotangent;
  const char * extra_kind = g == Graph::jvp ? "tangent" : "cotangent";
  if (extra)
    for (const auto & entry : *extra)
    {
      // Named, not a structured binding: Clang cannot capture one in a lambda before C++20.
      const std::string & name = entry.first;
      const bool wanted =
          std::any_of(call.spec->args.begin(), call.spec->args.end(),
                      [&](const SlotSpec & s) { return s.role == extra_role && s.name == name; });
      if (wanted)
        continue;
      // -d takes the names of the model's input file, from before any --rename-input.
      if (const auto * input = meta.find(meta.inputs, name); g == Graph::jvp && input)
        throw FatalError(who(meta) + ": no derivative pair with respect to '" + name +
                         "' was compiled: add -d OUTPUT:" + input->original() +
                         " (or -d :) to neml2-compile");
      const bool jvp = g == Graph::jvp;
      throw FatalError(who(meta) + ": unknown " + extra_kind + " '" + name + "' (expected " +
                       (jvp ? "inputs: " + names(meta.inputs) : "outputs: " + names(meta.outputs)) +
                       ")" +
                       (jvp ? renamed_note(meta, meta.inputs, name, "--rename-input")
                            : renamed_note(meta, meta.outputs, name, "--rename-output")));
    }

  std::optional<at::Device> device;
  // Slots that fixed the device and the batch size; names are built only for a message,
  // so the successful path allocates no strings.
  std::size_t device_slot = 0, batch_slot = 0;
  const auto describe = [&](std::size_t k)
  {
    const auto & sl = call.spec->args[k];
    const std::string kind = sl.role == extra_role                  ? extra_kind
                             : sl.role == SlotSpec::Role::parameter ? "parameter"
                                                                    : "input";
    return kind + " '" + sl.name + "'";
  };
  int64_t batch = -1;
  for (const auto & slot : call.spec->args)
  {
    if (slot.per_point)
    {
      // A per-point parameter is an argument of the call like an input, shared or per point.
      const auto found = params->find(slot.name);
      if (found == params->end() || !found->second.defined())
        throw FatalError(who(meta) + ": parameter '" + slot.name +
                         "' was removed from named_parameters()");
      const at::Tensor & t = found->second;
      const auto & spec = *meta.find(meta.parameters, slot.name);
      if (auto refused = parameter_refusal(meta, spec, t, std::nullopt))
        throw *refused;
      const bool batched = per_point_value(meta, spec, t);
      if (batched)
      {
        if (batch >= 0 && t.size(0) != batch)
          throw FatalError(who(meta) + ": batch sizes disagree: parameter '" + slot.name +
                           "' has " + std::to_string(t.size(0)) + " points but " +
                           describe(batch_slot) + " has " + std::to_string(batch));
        batch = t.size(0);
        batch_slot = call.args.size();
      }
      call.args.push_back(t);
      call.arg_batched.push_back(batched);
      continue;
    }
    // Parameters and settings are the model's own, filled in by Model::stage().
    if (slot.role == SlotSpec::Role::parameter || slot.role == SlotSpec::Role::setting)
    {
      call.args.emplace_back();
      call.arg_batched.push_back(false);
      continue;
    }
    const bool is_extra = slot.role == extra_role;
    const TensorMap * source = is_extra ? extra : &inputs;
    const auto & vars = slot.role == SlotSpec::Role::cotangent ? meta.outputs : meta.inputs;
    const auto * var = meta.find(vars, slot.name);
    const auto item = [&] { return describe(call.args.size()); }; // this slot, for messages
    const auto found = source ? source->find(slot.name) : inputs.end();
    if (!source || found == source->end())
    {
      if (!is_extra)
        throw FatalError(who(meta) + ": missing input '" + slot.name +
                         "' (expected inputs: " + names(meta.inputs) + ")");
      // A missing tangent or cotangent is zero; the device is fixed below.
      call.args.push_back(at::Tensor());
      call.arg_batched.push_back(false);
      continue;
    }
    const at::Tensor & t = found->second;
    if (!t.defined())
      throw FatalError(who(meta) + ": " + item() + " is an undefined tensor");
    if (t.scalar_type() != meta.dtype)
      throw FatalError(who(meta) + ": " + item() + " has dtype " +
                       std::string(c10::toString(t.scalar_type())) + ", expected " +
                       c10::toString(meta.dtype));
    if (!device)
    {
      // Only real memory can be sliced and copied to a device (a meta tensor has no data).
      if (!t.device().is_cpu() && !t.device().is_cuda())
        throw FatalError(who(meta) + ": " + item() + " is on " + t.device().str() +
                         ", expected a cpu or cuda tensor");
      device = t.device();
      device_slot = call.args.size();
    }
    else if (t.device() != *device)
      throw FatalError(who(meta) + ": inputs on mixed devices: " + item() + " is on " +
                       t.device().str() + " but " + describe(device_slot) + " is on " +
                       device->str());
    const auto base = at::IntArrayRef(var->shape);
    const auto shape = t.sizes();
    bool batched;
    if (shape.equals(base))
      batched = false;
    else if (shape.size() == base.size() + 1 && shape.slice(1).equals(base))
      batched = true;
    else
      throw FatalError(who(meta) + ": " + item() + " has shape " + shape_str(shape) +
                       ", expected " + shape_str(base) + " or (B, " + shape_str(base).substr(1) +
                       sub_batch_note(*var));
    if (batched)
    {
      if (batch >= 0 && shape[0] != batch)
        throw FatalError(who(meta) + ": batch sizes disagree: " + item() + " has " +
                         std::to_string(shape[0]) + " but " + describe(batch_slot) + " has " +
                         std::to_string(batch));
      batch = shape[0];
      batch_slot = call.args.size();
    }
    call.args.push_back(t);
    call.arg_batched.push_back(batched);
  }

  call.device = device.value_or(at::Device(at::kCPU));
  call.batched = batch >= 0;
  call.batch = call.batched ? batch : 1;
  // Fill missing tangents/cotangents with unbatched zeros on the inputs' device.
  for (std::size_t i = 0; i < call.args.size(); ++i)
  {
    const auto & slot = call.spec->args[i];
    if (call.args[i].defined() || slot.role == SlotSpec::Role::parameter ||
        slot.role == SlotSpec::Role::setting)
      continue;
    const auto & vars = slot.role == SlotSpec::Role::cotangent ? meta.outputs : meta.inputs;
    call.args[i] = at::zeros(meta.find(vars, slot.name)->shape,
                             at::TensorOptions().dtype(meta.dtype).device(call.device));
  }
  for (const auto & r : call.spec->returns)
  {
    call.combine.push_back(combine_of(meta, r));
    // The per-point adjoint of a parameter given shared is summed, as in the shared graph.
    const bool shared = r.per_point && !call.arg_batched[per_point_arg(*call.spec, r.name)];
    call.sum_rows.push_back(shared);
    if (shared)
      call.combine.back() = Combine::sum;
  }
  return call;
}

} // namespace neml2::aoti::detail
