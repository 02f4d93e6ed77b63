// model_meta.json: the self-description of one device's compiled graphs (doc/artifacts.md),
// as the structures read_meta() (artifact/read_meta.h) fills.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti
{
/// @brief A named variable or parameter with the shape of one material point.
struct VariableSpec
{
  std::string name;           ///< variable name, e.g. "strain" or "model.E"
  std::vector<int64_t> shape; ///< per-point shape, e.g. {6}; empty for a scalar
  /// Leading axes of @ref shape that are sub-batch axes (one entry per grain, per slip
  /// system, ...), e.g. {12} for a shape {12, 6}; empty for most variables. Only the batch
  /// axis in front of @ref shape is ever sliced.
  std::vector<int64_t> sub_batch;
  std::vector<double> value; ///< initial value (parameters only), row-major
  /// The name in the model's input file when `neml2-compile --rename-input`,
  /// `--rename-output` or `--rename-parameter` gave the variable the name @ref name; empty
  /// when it was not renamed.
  std::string renamed_from;

  /// @brief The name in the model's input file: @ref renamed_from, or @ref name.
  const std::string & original() const { return renamed_from.empty() ? name : renamed_from; }
};

/// @brief One derivative block d(of)/d(wrt).
struct DerivativeSpec
{
  std::string of;      ///< output name
  std::string wrt;     ///< input or parameter name
  bool batched = true; ///< false: the block does not depend on the batch and comes unbatched
};

/// @brief One run-time setting of an implicit model's Newton solves: a 0-dim argument of
/// every graph (role `setting`), named `<solver>.abs_tol`, `.rel_tol` or `.max_its`.
struct SettingSpec
{
  std::string name;                   ///< e.g. "newton.abs_tol"
  std::string solver;                 ///< the solver it belongs to, e.g. "newton"
  at::ScalarType dtype = at::kDouble; ///< the model's dtype, or int64 for max_its
  double value = 0;                   ///< the compiled value, the default
};

/// @brief One positional argument or return value of a graph.
struct SlotSpec
{
  /// @brief What a slot holds (doc/artifacts.md, "Graph calling convention").
  enum class Role
  {
    input,
    parameter,
    tangent,
    cotangent,
    output,
    derivative,
    adjoint,
    converged,
    residual,
    setting
  };
  Role role = Role::input; ///< what the slot holds
  std::string name;        ///< variable name (all roles but derivative)
  std::string of;          ///< derivative only: output name
  std::string wrt;         ///< derivative only: input or parameter name
  /// A graph's per-point variant only (GraphSpec::per_point): a `parameter` argument that
  /// takes one value per point, `(B, *shape)`, or the `adjoint` return of such a parameter,
  /// one per point instead of summed over the batch.
  bool per_point = false;
  /// A graph's per-point variant only: whether a `derivative` return comes with the batch
  /// dimension there; none: as Meta::derivatives and Meta::param_derivatives say.
  std::optional<bool> batched;
};

/// @brief One compiled graph: its file and positional signature.
struct GraphSpec
{
  std::filesystem::path file;    ///< absolute path of the .pt2
  std::vector<SlotSpec> args;    ///< positional inputs
  std::vector<SlotSpec> returns; ///< positional outputs
  /// The .pt2 of the graph's in-place variant (`neml2-compile --into`, CPU only), or empty:
  /// it takes the graph's arguments and then one buffer per per-point return, in return
  /// order, and stores those returns straight into the buffers.
  std::filesystem::path into;
};

/// @brief One compiled graph and, when `neml2-compile --per-point` asked for one, its
/// per-point variant: the same slots in the same order, with the per-point parameters taking
/// `(B, *shape)` (SlotSpec::per_point).
struct CompiledGraph : GraphSpec
{
  std::optional<GraphSpec> per_point; ///< the per-point variant, or none
};

/// @brief The contents of one model_meta.json, validated.
struct Meta
{
  std::filesystem::path folder;                  ///< the folder the meta was read from
  int schema = 0;                                ///< schema version (1)
  std::string model;                             ///< model block name
  std::string type;                              ///< model type that was compiled
  std::string device;                            ///< "cpu" or "cuda"
  at::ScalarType dtype = at::kDouble;            ///< floating-point dtype of all tensors
  std::string torch_version;                     ///< torch that exported the graphs
  std::vector<VariableSpec> inputs;              ///< model inputs in order
  std::vector<VariableSpec> outputs;             ///< model outputs in order
  std::vector<VariableSpec> parameters;          ///< promoted parameters in order
  std::vector<DerivativeSpec> derivatives;       ///< compiled output:input pairs
  std::vector<DerivativeSpec> param_derivatives; ///< output:parameter blocks
  std::optional<std::pair<std::string, std::string>>
      status;                        ///< implicit models: (converged, residual)
  std::vector<SettingSpec> settings; ///< the solves' run-time settings, three per solver
  /// The promoted parameters that may be given per point, `(B, *shape)` (`neml2-compile
  /// --per-point`), in the order of @ref parameters; every graph then has a per-point variant.
  std::vector<std::string> per_point;
  std::map<Graph, CompiledGraph> graphs; ///< the graphs present

  /// @brief Whether @p g was compiled.
  bool has(Graph g) const { return graphs.count(g) != 0; }

  /// @brief The input, output or parameter called @p name, or nullptr.
  const VariableSpec * find(const std::vector<VariableSpec> & list, const std::string & name) const
  {
    for (const auto & v : list)
      if (v.name == name)
        return &v;
    return nullptr;
  }

  /// @brief Whether the promoted parameter @p name may be given per point.
  bool per_point_capable(const std::string & name) const
  {
    return std::find(per_point.begin(), per_point.end(), name) != per_point.end();
  }

  /// @brief The setting called @p name, or nullptr.
  const SettingSpec * find_setting(const std::string & name) const
  {
    for (const auto & v : settings)
      if (v.name == name)
        return &v;
    return nullptr;
  }

  /// @brief The entry of @p list that `neml2-compile` renamed from @p original, or nullptr.
  const VariableSpec * find_renamed(const std::vector<VariableSpec> & list,
                                    const std::string & original) const
  {
    for (const auto & v : list)
      if (!v.renamed_from.empty() && v.renamed_from == original)
        return &v;
    return nullptr;
  }
};

} // namespace neml2::aoti
