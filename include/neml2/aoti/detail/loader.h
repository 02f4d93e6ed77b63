// Loading one compiled graph: its AOTI package checked for damage, and its arguments
// counted against model_meta.json, before the first call could crash the host.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/parse_json.h"
#include "neml2/aoti/detail/zip.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/**
 * The number of tensors in part @p which (0: inputs, 1: outputs) of a compiled graph's
 * call spec: the leaves of the pytree spec torch stores with the graph, e.g.
 * `[1, {"type": "builtins.tuple", ..., "children_spec": [...]}]`, where a leaf has type
 * null. Empty when the loader gives no spec or one in a form this reader does not know
 * (then nothing is checked).
 */
inline std::optional<std::size_t>
call_spec_leaves(torch::inductor::AOTIModelPackageLoader & loader, std::size_t which)
{
  std::vector<std::string> specs;
  try
  {
    specs = loader.get_call_spec();
  }
  catch (...)
  {
    return std::nullopt;
  }
  if (which >= specs.size())
    return std::nullopt;
  // Not parse_json: a spec this reader cannot read means "not checked", not an error.
  const Json root = Json::parse(specs[which], nullptr, /*allow_exceptions=*/false);
  if (!root.is_array() || root.size() != 2)
    return std::nullopt;
  std::size_t leaves = 0;
  bool known = true;
  // Bounded: the spec comes from a file, and a hostile one could nest deeply.
  constexpr int max_depth = 64;
  const std::function<void(const Json &, int)> walk = [&](const Json & node, int depth)
  {
    if (depth > max_depth)
    {
      known = false;
      return;
    }
    const auto type = node.is_object() ? node.find("type") : node.end();
    const auto children = node.is_object() ? node.find("children_spec") : node.end();
    if (type == node.end() || children == node.end() || !children->is_array())
    {
      known = false;
      return;
    }
    if (type->is_null())
      ++leaves;
    for (const auto & c : *children)
      walk(c, depth + 1);
  };
  walk(root[1], 0);
  return known ? std::optional<std::size_t>(leaves) : std::nullopt;
}

/**
 * The loader of the package @p file of graph @p g for @p device, checked: the package is
 * intact, and the graph takes @p args arguments. Errors are FatalErrors that start with
 * @p context.
 */
inline std::unique_ptr<torch::inductor::AOTIModelPackageLoader>
load_graph(const std::string & context, Graph g, const std::filesystem::path & file,
           std::size_t args, const at::Device & device)
{
  // The loader checks no checksum: a damaged library inside the package would load and
  // crash the host at its first call, so refuse it here.
  FileBytes bytes(file);
  const std::string damage = bytes.ok() ? zip_damage(bytes) : "cannot be read";
  if (!damage.empty())
    throw FatalError(context + ": cannot load graph '" + graph_name(g) + "' from '" +
                     file.string() + "': corrupted package: " + damage +
                     ": recompile the model with neml2-compile");
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  try
  {
    loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        file.string(), "model", false, 1, device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
  }
  catch (...)
  {
    rethrow_normalized(context + ": cannot load graph '" + graph_name(g) + "' from '" +
                       file.string() + "'");
  }
  // A graph called with another number of arguments than it was compiled for reads past
  // them (torch 2.11 checks nothing and crashes): compare first.
  const auto taken = call_spec_leaves(*loader, 0);
  if (taken && *taken != args)
    throw FatalError(context + ": graph '" + graph_name(g) + "' in '" + file.string() + "' takes " +
                     std::to_string(*taken) + " inputs, model_meta.json declares " +
                     std::to_string(args) +
                     ": the graph files and model_meta.json do not match; recompile "
                     "the model with neml2-compile");
  return loader;
}
} // namespace neml2::aoti::detail
