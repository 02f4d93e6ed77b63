// Reading and validating model_meta.json into a Meta: the schema, the torch version, the
// device, the graphs' files and every field.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/version.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/artifact/parse_json.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti
{
namespace detail
{
/// Accessors that turn a missing or mistyped field into a FatalError naming the file and field.
class MetaReader
{
public:
  explicit MetaReader(std::string file) : _file(std::move(file)) {}

  [[noreturn]] void fail(const std::string & what) const { throw FatalError(_file + ": " + what); }

  const Json & get(const Json & obj, const std::string & key, JsonKind kind,
                   const std::string & where) const
  {
    if (!obj.is_object())
      fail(where + " must be an object");
    const auto it = obj.find(key);
    if (it == obj.end())
      fail("missing field '" + where + key + "'");
    if (kind_of(*it) != kind)
      fail("field '" + where + key + "' must be " + kind_name(kind) + ", found " +
           kind_name(kind_of(*it)));
    return *it;
  }

  std::string str(const Json & obj, const std::string & key, const std::string & where = "") const
  {
    return get(obj, key, JsonKind::string, where).get<std::string>();
  }

  int64_t integer(const Json & v, const std::string & what) const
  {
    constexpr auto largest = std::numeric_limits<int64_t>::max();
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(largest))
      return int64_t(v.get<std::uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned())
      return v.get<int64_t>();
    // A number written with a fraction or an exponent counts when it is a whole number.
    // Range first: converting a double outside int64_t's range (1e300) to an integer is
    // undefined behaviour (found by fuzz_meta).
    constexpr double limit = 9.2e18; // a little below 2^63
    if (v.is_number_float())
    {
      const double d = v.get<double>();
      if (std::fabs(d) < limit && d == double(int64_t(d)))
        return int64_t(d);
    }
    fail(what + " must be an integer");
  }

  std::vector<VariableSpec> variables(const Json & root, const std::string & key,
                                      bool with_value) const
  {
    std::vector<VariableSpec> out;
    const Json & arr = get(root, key, JsonKind::array, "");
    for (std::size_t i = 0; i < arr.size(); ++i)
    {
      const std::string where = key + "[" + std::to_string(i) + "].";
      const Json & e = arr[i];
      VariableSpec v;
      v.name = str(e, "name", where);
      if (v.name.empty())
        fail("field '" + where + "name' is empty");
      int64_t numel = 1;
      for (const auto & d : get(e, "shape", JsonKind::array, where))
      {
        const int64_t n = integer(d, "field '" + where + "shape'");
        if (n < 0 || n > (int64_t(1) << 31))
          fail("field '" + where + "shape' has an invalid size " + std::to_string(n));
        v.shape.push_back(n);
        numel *= n;
        if (numel > (int64_t(1) << 31))
          fail("field '" + where + "shape' is too large");
      }
      if (const auto sub = e.find("sub_batch"); sub != e.end())
      {
        if (!sub->is_array())
          fail("field '" + where + "sub_batch' must be an array");
        for (const auto & d : *sub)
          v.sub_batch.push_back(integer(d, "field '" + where + "sub_batch'"));
        if (v.sub_batch.size() > v.shape.size() ||
            !std::equal(v.sub_batch.begin(), v.sub_batch.end(), v.shape.begin()))
          fail("field '" + where + "sub_batch' must be the leading axes of its shape");
      }
      if (with_value)
      {
        for (const auto & x : get(e, "value", JsonKind::array, where))
        {
          if (!x.is_number())
            fail("field '" + where + "value' must hold numbers");
          v.value.push_back(x.get<double>());
        }
        if (int64_t(v.value.size()) != numel)
          fail("field '" + where + "value' has " + std::to_string(v.value.size()) +
               " numbers, shape needs " + std::to_string(numel));
      }
      if (e.contains("renamed_from"))
      {
        v.renamed_from = str(e, "renamed_from", where);
        if (v.renamed_from.empty())
          fail("field '" + where + "renamed_from' is empty");
      }
      for (const auto & prev : out)
      {
        if (prev.name == v.name)
          fail("duplicate name '" + v.name + "' in '" + key + "'");
        if (prev.original() == v.original())
          fail("duplicate original name '" + v.original() + "' in '" + key + "'");
      }
      out.push_back(std::move(v));
    }
    return out;
  }

  std::vector<DerivativeSpec> derivatives(const Json & root, const std::string & key) const
  {
    std::vector<DerivativeSpec> out;
    const auto arr = root.find(key);
    if (arr == root.end())
      return out;
    if (!arr->is_array())
      fail("field '" + key + "' must be an array");
    for (std::size_t i = 0; i < arr->size(); ++i)
    {
      const std::string where = key + "[" + std::to_string(i) + "].";
      const Json & e = (*arr)[i];
      DerivativeSpec d;
      d.of = str(e, "of", where);
      d.wrt = str(e, "wrt", where);
      d.batched = get(e, "batched", JsonKind::boolean, where).get<bool>();
      out.push_back(d);
    }
    return out;
  }

  /// The `settings` of an implicit model: per solver its abs_tol, rel_tol and max_its, in
  /// that order, tolerances finite and >= 0 in the model's dtype, max_its an int64 >= 1.
  std::vector<SettingSpec> settings(const Json & root, at::ScalarType dtype) const
  {
    std::vector<SettingSpec> out;
    const auto arr = root.find("settings");
    if (arr == root.end())
      return out; // written before run-time settings existed
    if (!arr->is_array())
      fail("field 'settings' must be an array");
    static const char * const fields[] = {".abs_tol", ".rel_tol", ".max_its"};
    for (std::size_t i = 0; i < arr->size(); ++i)
    {
      const std::string where = "settings[" + std::to_string(i) + "].";
      const Json & e = (*arr)[i];
      SettingSpec v;
      v.name = str(e, "name", where);
      const std::string field = fields[i % 3];
      v.solver = v.name.size() > field.size() ? v.name.substr(0, v.name.size() - field.size()) : "";
      const std::string & solver = v.solver;
      if (solver.empty() || v.name.compare(solver.size(), field.size(), field) != 0 ||
          (i % 3 != 0 && out[i - i % 3].solver != solver))
        fail("field '" + where + "name' is '" + v.name + "', expected <solver>" + field +
             " (each solver's abs_tol, rel_tol and max_its in turn)");
      for (std::size_t k = 0; k + i % 3 < i; k += 3)
        if (out[k].solver == solver)
          fail("field '" + where + "name': solver '" + solver + "' given twice");
      const std::string dt = str(e, "dtype", where);
      const bool cap = i % 3 == 2;
      v.dtype = cap ? at::kLong : dtype;
      const char * want = cap ? "int64" : dtype == at::kDouble ? "float64" : "float32";
      if (dt != want)
        fail("field '" + where + "dtype' is '" + dt + "', expected " +
             (cap ? std::string("int64") : std::string("the model's dtype")));
      const Json & x = get(e, "value", JsonKind::number, where);
      v.value = cap ? double(integer(x, "field '" + where + "value'")) : x.get<double>();
      if (cap ? v.value < 1 : !(std::isfinite(v.value) && v.value >= 0))
        fail("field '" + where + "value' is " + x.dump() + ", expected " +
             (cap ? "an integer >= 1" : "a finite number >= 0"));
      out.push_back(std::move(v));
    }
    if (out.size() % 3 != 0)
      fail("field 'settings' has " + std::to_string(out.size()) +
           " entries, expected three per solver");
    return out;
  }

  std::vector<SlotSpec> slots(const Json & g, const std::string & key,
                              const std::string & where) const
  {
    static const std::map<std::string, SlotSpec::Role> roles = {
        {"input", SlotSpec::Role::input},       {"parameter", SlotSpec::Role::parameter},
        {"tangent", SlotSpec::Role::tangent},   {"cotangent", SlotSpec::Role::cotangent},
        {"output", SlotSpec::Role::output},     {"derivative", SlotSpec::Role::derivative},
        {"adjoint", SlotSpec::Role::adjoint},   {"converged", SlotSpec::Role::converged},
        {"residual", SlotSpec::Role::residual}, {"setting", SlotSpec::Role::setting}};
    std::vector<SlotSpec> out;
    const Json & arr = get(g, key, JsonKind::array, where);
    for (std::size_t i = 0; i < arr.size(); ++i)
    {
      const std::string w = where + key + "[" + std::to_string(i) + "].";
      const Json & e = arr[i];
      SlotSpec s;
      const std::string role = str(e, "role", w);
      const auto it = roles.find(role);
      if (it == roles.end())
        fail("field '" + w + "role' has unknown role '" + role + "'");
      s.role = it->second;
      if (s.role == SlotSpec::Role::derivative)
      {
        s.of = str(e, "of", w);
        s.wrt = str(e, "wrt", w);
      }
      else
        s.name = str(e, "name", w);
      if (e.contains("per_point"))
        s.per_point = get(e, "per_point", JsonKind::boolean, w).get<bool>();
      if (e.contains("batched"))
        s.batched = get(e, "batched", JsonKind::boolean, w).get<bool>();
      out.push_back(std::move(s));
    }
    return out;
  }

private:
  std::string _file;
};

/// Split "2.13.0+cpu" into (2, 13); (-1, -1) when unreadable.
inline std::pair<int, int>
major_minor(const std::string & v)
{
  int major = -1, minor = -1;
  char dot = 0;
  std::istringstream in(v);
  if (!(in >> major >> dot >> minor) || dot != '.')
    return {-1, -1};
  return {major, minor};
}

/// One graph entry of model_meta.json (a graph or its per-point variant), its files present
/// and its arguments known to @p m.
inline GraphSpec
graph_spec(const MetaReader & r, const Meta & m, const std::filesystem::path & folder,
           const Json & gj, const std::string & where)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  GraphSpec spec;
  spec.file = folder / r.str(gj, "file", where);
  spec.args = r.slots(gj, "args", where);
  spec.returns = r.slots(gj, "returns", where);
  if (!fs::is_regular_file(spec.file, ec))
    r.fail("graph file '" + spec.file.string() + "' is missing");
  if (gj.contains("into"))
  {
    spec.into = folder / r.str(gj, "into", where);
    if (!fs::is_regular_file(spec.into, ec))
      r.fail("graph file '" + spec.into.string() + "' is missing");
  }
  for (const auto & s : spec.args)
  {
    const bool known = (s.role == SlotSpec::Role::input && m.find(m.inputs, s.name)) ||
                       (s.role == SlotSpec::Role::tangent && m.find(m.inputs, s.name)) ||
                       (s.role == SlotSpec::Role::parameter && m.find(m.parameters, s.name)) ||
                       (s.role == SlotSpec::Role::cotangent && m.find(m.outputs, s.name)) ||
                       (s.role == SlotSpec::Role::setting && m.find_setting(s.name));
    if (!known)
      r.fail(where + "args names '" + s.name + "', which is not a variable of that role");
  }
  // Every setting, in the order of 'settings': the graph's solve reads each one.
  std::vector<std::string> taken;
  for (const auto & s : spec.args)
    if (s.role == SlotSpec::Role::setting)
      taken.push_back(s.name);
  bool same = taken.size() == m.settings.size();
  for (std::size_t i = 0; same && i < taken.size(); ++i)
    same = taken[i] == m.settings[i].name;
  if (!same)
    r.fail(where + "args: its 'setting' args are not the entries of 'settings' in order");
  return spec;
}

/**
 * Refuse a per-point variant @p pp that is not @p g's slots in @p g's order with exactly the
 * per-point parameters marked: its arguments and adjoints carry `per_point` for the
 * parameters of 'per_point' and no other, and its derivatives say whether they are batched.
 */
inline void
check_per_point_variant(const MetaReader & r, const Meta & m, const GraphSpec & g,
                        const GraphSpec & pp, const std::string & where)
{
  if (m.per_point.empty())
    r.fail("field '" + where.substr(0, where.size() - 1) +
           "' is present but 'per_point' lists no parameter");
  const auto same = [](const SlotSpec & a, const SlotSpec & b)
  { return a.role == b.role && a.name == b.name && a.of == b.of && a.wrt == b.wrt; };
  for (const auto * key : {"args", "returns"})
  {
    const bool args = std::string(key) == "args";
    const auto & mine = args ? pp.args : pp.returns;
    const auto & theirs = args ? g.args : g.returns;
    if (mine.size() != theirs.size())
      r.fail("field '" + where + key + "' has " + std::to_string(mine.size()) +
             " slots, the graph has " + std::to_string(theirs.size()));
    for (std::size_t i = 0; i < mine.size(); ++i)
    {
      const SlotSpec & s = mine[i];
      const std::string w = where + key + "[" + std::to_string(i) + "]";
      if (!same(s, theirs[i]))
        r.fail("field '" + w + "' is not the graph's slot in that place");
      const bool marked =
          (s.role == SlotSpec::Role::parameter || s.role == SlotSpec::Role::adjoint) &&
          m.per_point_capable(s.name);
      if (s.per_point != marked)
        r.fail("field '" + w + "." + "per_point' must be " + (marked ? "true" : "absent") +
               " for '" + s.name + "'");
      if ((s.role == SlotSpec::Role::derivative) != s.batched.has_value())
        r.fail("field '" + w + ".batched' must be given for a derivative and only there");
    }
  }
}
} // namespace detail

/**
 * @brief Read and validate `<folder>/model_meta.json`.
 *
 * Refuses (FatalError naming the file) an unknown schema, a torch major.minor
 * other than the one this program is linked against, a device other than
 * @p expected_device, graphs whose files are missing, and any malformed field.
 *
 * @param folder the per-device artifact folder, e.g. `aoti/model/cpu`
 * @param expected_device the device type the caller will run on ("cpu" or "cuda")
 */
inline Meta
read_meta(const std::filesystem::path & folder, const std::string & expected_device)
{
  namespace fs = std::filesystem;
  const fs::path file = folder / "model_meta.json";
  const std::string fname = file.string();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw FatalError("artifact folder '" + folder.string() +
                     "' does not exist: compile the model "
                     "for device '" +
                     expected_device + "' with neml2-compile --device " + expected_device);
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw FatalError("cannot open '" + fname + "'");
  std::stringstream buf;
  buf << in.rdbuf();

  const detail::Json root = detail::parse_json(buf.str(), fname);

  const detail::MetaReader r(fname);
  if (!root.is_object())
    r.fail("expected a JSON object at the top level");
  Meta m;
  m.folder = folder;
  const auto & schema = r.get(root, "schema", detail::JsonKind::number, "");
  // Compared before narrowing to int, so that 2^32 + 1 cannot pass for 1.
  const int64_t schema_number = r.integer(schema, "field 'schema'");
  if (schema_number != 1)
    r.fail("unknown schema " + std::to_string(schema_number) +
           " (this library reads schema 1): recompile with a matching neml2-compile");
  m.schema = 1;

  m.torch_version = r.str(root, "torch_version");
  const auto [maj, min] = detail::major_minor(m.torch_version);
  if (maj != TORCH_VERSION_MAJOR || min != TORCH_VERSION_MINOR)
    r.fail("artifact built by torch " + m.torch_version + ", this program uses torch " +
           std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) +
           ": recompile the model with the torch this program links against");

  m.model = r.str(root, "model");
  m.type = r.str(root, "type");
  m.device = r.str(root, "device");
  if (m.device != expected_device)
    r.fail("artifact compiled for device '" + m.device + "' but found in the folder for '" +
           expected_device + "'");
  const std::string dtype = r.str(root, "dtype");
  if (dtype == "float64")
    m.dtype = at::kDouble;
  else if (dtype == "float32")
    m.dtype = at::kFloat;
  else
    r.fail("unsupported dtype '" + dtype + "' (expected float64 or float32)");

  m.inputs = r.variables(root, "inputs", false);
  m.outputs = r.variables(root, "outputs", false);
  m.parameters = r.variables(root, "parameters", true);
  m.derivatives = r.derivatives(root, "derivatives");
  m.param_derivatives = r.derivatives(root, "param_derivatives");
  if (m.inputs.empty() || m.outputs.empty())
    r.fail("a model needs at least one input and one output");

  for (const auto & d : m.derivatives)
    if (!m.find(m.outputs, d.of) || !m.find(m.inputs, d.wrt))
      r.fail("derivative pair " + d.of + ":" + d.wrt + " names an unknown variable");
  for (const auto & d : m.param_derivatives)
    if (!m.find(m.outputs, d.of) || !m.find(m.parameters, d.wrt))
      r.fail("parameter derivative " + d.of + ":" + d.wrt + " names an unknown variable");

  m.settings = r.settings(root, m.dtype);
  if (const auto st = root.find("status"); st != root.end() && !st->is_null())
    m.status =
        std::make_pair(r.str(*st, "converged", "status."), r.str(*st, "residual", "status."));

  if (const auto pp = root.find("per_point"); pp != root.end())
  {
    const auto & list = r.get(root, "per_point", detail::JsonKind::array, "");
    for (std::size_t i = 0; i < list.size(); ++i)
    {
      const std::string w = "per_point[" + std::to_string(i) + "]";
      if (!list[i].is_string())
        r.fail("field '" + w + "' is not a string");
      const auto name = list[i].get<std::string>();
      if (!m.find(m.parameters, name))
        r.fail("field '" + w + "' names '" + name + "', which is not a promoted parameter");
      if (m.per_point_capable(name))
        r.fail("field 'per_point' lists '" + name + "' twice");
      m.per_point.push_back(name);
    }
  }

  const auto & graphs = r.get(root, "graphs", detail::JsonKind::object, "");
  for (const Graph g : all_graphs)
  {
    const auto gj = graphs.find(graph_name(g));
    if (gj == graphs.end())
      continue;
    const std::string where = std::string("graphs.") + graph_name(g) + ".";
    CompiledGraph spec;
    static_cast<GraphSpec &>(spec) = detail::graph_spec(r, m, folder, *gj, where);
    if (gj->contains("per_point"))
    {
      const std::string w = where + "per_point.";
      spec.per_point = detail::graph_spec(
          r, m, folder, r.get(*gj, "per_point", detail::JsonKind::object, where), w);
      detail::check_per_point_variant(r, m, spec, *spec.per_point, w);
    }
    else if (!m.per_point.empty())
      r.fail("field '" + where + "per_point' is missing: 'per_point' lists parameters");
    m.graphs.emplace(g, std::move(spec));
  }
  if (!m.has(Graph::forward))
    r.fail("missing field 'graphs.forward'");
  return m;
}
} // namespace neml2::aoti
