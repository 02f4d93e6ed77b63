// Validation of the promoted parameters a user holds in named_parameters(), shared by Model and
// DispatchedModel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/**
 * Refuse an entry of @p params that is not a promoted parameter of the model: a
 * misspelt name (or a parameter that was baked into the graph) would otherwise be
 * ignored, and the run would silently go on with the old value. A missing name is
 * caught where the parameter is read, so the common case costs one size comparison.
 */
inline void
check_parameter_names(const Meta & meta, const TensorMap & params)
{
  if (params.size() <= meta.parameters.size())
    return;
  for (const auto & [name, t] : params)
    if (!meta.find(meta.parameters, name))
    {
      const std::string renamed = renamed_note(meta, meta.parameters, name, "--rename-parameter");
      if (!renamed.empty())
        throw FatalError(who(meta) + ": unknown parameter '" + name +
                         "' in named_parameters() (promoted parameters: " + names(meta.parameters) +
                         ")" + renamed);
      throw FatalError(who(meta) + ": unknown parameter '" + name +
                       "' in named_parameters() (promoted parameters: " + names(meta.parameters) +
                       "): a parameter baked into the graph cannot be changed at run time; "
                       "promote it with -p NAME (or -p :) to neml2-compile");
    }
}

/**
 * The tensor @p params holds for the promoted parameter @p spec, checked: the user may have
 * removed it, or replaced it with one of another shape, dtype or device.
 *
 * @param meta the model (for its name and dtype)
 * @param params the parameter map as the user left it
 * @param spec the parameter, one of meta.parameters
 * @param device where the tensor must be (a model's own map); none: on any CPU or CUDA device
 * (the master map of a dispatched model, copied to each device later)
 * @return the tensor, valid as long as @p params is not changed
 */
inline const at::Tensor &
checked_parameter(const Meta & meta, const TensorMap & params, const VariableSpec & spec,
                  const std::optional<at::Device> & device)
{
  const auto it = params.find(spec.name);
  if (it == params.end())
    throw FatalError(who(meta) + ": parameter '" + spec.name +
                     "' was removed from named_parameters()");
  const at::Tensor & t = it->second;
  if (auto refused = parameter_refusal(meta, spec, t, device))
    throw *refused;
  return t;
}

/**
 * Put @p value in @p params as the promoted parameter @p name, after the checks a call makes
 * (checked_parameter()); an unknown name or a tensor a call would refuse is a FatalError and
 * leaves @p params as it was.
 */
inline void
set_parameter(const Meta & meta, TensorMap & params, const std::string & name,
              const at::Tensor & value, const std::optional<at::Device> & device)
{
  const auto * spec = meta.find(meta.parameters, name);
  if (!spec)
    throw FatalError(who(meta) + ": set_parameter: unknown parameter '" + name +
                     "' (promoted parameters: " + names(meta.parameters) + ")" +
                     renamed_note(meta, meta.parameters, name, "--rename-parameter"));
  const TensorMap one{{name, value}};
  checked_parameter(meta, one, *spec, device);
  params[name] = value;
}

/**
 * The promoted parameters of @p meta as @p params holds them, in the graphs' order; the same
 * checks as a call (checked_parameter()), so a map a call would refuse is refused here too.
 */
inline std::vector<ParameterInfo>
parameter_info(const Meta & meta, const TensorMap & params,
               const std::optional<at::Device> & device)
{
  check_parameter_names(meta, params);
  std::vector<ParameterInfo> out;
  out.reserve(meta.parameters.size());
  for (const auto & spec : meta.parameters)
  {
    const at::Tensor & t = checked_parameter(meta, params, spec, device);
    out.push_back({spec.name, t.sizes().vec(), t.device(), t.scalar_type()});
  }
  return out;
}
} // namespace neml2::aoti::detail
