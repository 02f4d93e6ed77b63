// The run-time settings of an implicit model's Newton solves (model_meta.json `settings`),
// shared by Model and DispatchedModel: their values by solver, checks and device tensors.
#pragma once

#include <cmath>
#include <locale>
#include <map>
#include <sstream>
#include <string>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/// Solvers by name, as a model holds them.
using Solvers = std::map<std::string, SolverSettings>;

/// The solvers of @p meta with their compiled values (`settings` holds three per solver).
inline Solvers
compiled_solvers(const Meta & meta)
{
  Solvers out;
  for (std::size_t i = 0; i + 2 < meta.settings.size(); i += 3)
    out[meta.settings[i].solver] = {meta.settings[i].value, meta.settings[i + 1].value,
                                    static_cast<int64_t>(meta.settings[i + 2].value)};
  return out;
}

/// Refuse settings a call could not use: an unknown solver, a tolerance that is not a finite
/// number >= 0, an iteration cap below 1. Nothing is changed when this throws.
inline void
check_solver_settings(const Meta & meta, const Solvers & known, const std::string & solver,
                      const SolverSettings & s)
{
  if (!known.count(solver))
  {
    std::string names;
    for (const auto & [name, _] : known)
      names += (names.empty() ? "" : ", ") + name;
    throw FatalError(who(meta) + ": unknown solver '" + solver + "' (expected solvers: " +
                     (names.empty() ? "none, the model solves no equation" : names) + ")");
  }
  const auto number = [](double v)
  {
    std::ostringstream os;
    os.imbue(std::locale::classic());
    os << v;
    return os.str();
  };
  for (const auto & [field, v] : {std::pair{"abs_tol", s.abs_tol}, {"rel_tol", s.rel_tol}})
    if (!(std::isfinite(v) && v >= 0))
      throw FatalError(who(meta) + ": setting '" + solver + "." + field + "' is " + number(v) +
                       ", expected a finite number >= 0");
  if (s.max_its < 1)
    throw FatalError(who(meta) + ": setting '" + solver + ".max_its' is " +
                     std::to_string(s.max_its) + ", expected an integer >= 1");
}

/// The `setting` arguments of @p solver on @p device, by setting name: 0-dim tensors in the
/// dtypes of @p meta (the copy to a GPU completes before this returns).
inline TensorMap
setting_tensors(const Meta & meta, const std::string & solver, const SolverSettings & s,
                const at::Device & device)
{
  TensorMap out;
  for (const auto & spec : meta.settings)
  {
    if (spec.solver != solver)
      continue;
    const std::string field = spec.name.substr(solver.size() + 1);
    const double v = field == "abs_tol" ? s.abs_tol : field == "rel_tol" ? s.rel_tol : s.max_its;
    out[spec.name] = at::scalar_tensor(v, at::TensorOptions().dtype(spec.dtype)).to(device);
  }
  return out;
}
} // namespace neml2::aoti::detail
