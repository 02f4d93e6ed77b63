// The stub reader (HIT subset) and the model_meta.json reader, on files written here.
#include "catch.h"
#include "fatal_message.h"

#include <atomic>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "neml2/aoti/artifact/Stub.h"
#include "neml2/aoti/artifact/read_meta.h"

using namespace neml2::aoti;
using neml2_test::fatal_message;
namespace fs = std::filesystem;

namespace
{
/// A fresh temporary folder, removed at scope exit.
struct TempDir
{
  TempDir()
  {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("neml2_unit_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir()
  {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path write(const std::string & name, const std::string & text) const
  {
    const fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path path;
};

std::string
torch_mm()
{
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

/// A valid meta with one hook to break it.
std::string
meta_json(const std::string & schema = "1", const std::string & torch = "",
          const std::string & device = "cpu", const std::string & dtype = "float64",
          const std::string & forward_file = "forward.pt2")
{
  return R"({"schema": )" + schema + R"(, "model": "model", "type": "LinearIsotropicElasticity",
  "device": ")" +
         device + R"(", "dtype": ")" + dtype + R"(", "torch_version": ")" +
         (torch.empty() ? torch_mm() + ".0" : torch) + R"(",
  "inputs": [{"name": "strain", "shape": [6]}],
  "outputs": [{"name": "stress", "shape": [6]}],
  "parameters": [{"name": "model.E", "shape": [], "value": [100.0]}],
  "derivatives": [{"of": "stress", "wrt": "strain", "batched": false}],
  "param_derivatives": [{"of": "stress", "wrt": "model.E", "batched": true}],
  "status": null,
  "graphs": {"forward": {"file": ")" +
         forward_file + R"(",
     "args": [{"role": "input", "name": "strain"}, {"role": "parameter", "name": "model.E"}],
     "returns": [{"role": "output", "name": "stress"}]}}})";
}
} // namespace

TEST_CASE("HIT: sections, fields, quotes and comments", "[stub]")
{
  const auto root =
      parse_hit("# header\n[Models] # trailing\n  [model]\n    type = AOTIModel\n"
                "    artifact_path = 'my model' # 'quoted'\n    n=\"3\"\n  [../]\n[]\n",
                "f.i");
  const auto * models = root.section("Models");
  REQUIRE(models);
  const auto * m = models->section("model");
  REQUIRE(m);
  CHECK(m->line == 3);
  CHECK(m->field("type")->value == "AOTIModel");
  CHECK(m->field("artifact_path")->value == "my model");
  CHECK(m->field("artifact_path")->line == 5);
  CHECK(m->field("n")->value == "3");
  CHECK(m->field("nope") == nullptr);
}

TEST_CASE("HIT errors name file and line", "[stub]")
{
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[Models]\n  [a\n[]\n", "f.i:2: expected ']'"},
      {"[Models]\n  key\n[]\n", "f.i:2: expected 'key = value'"},
      {"[Models]\n  key = 'open\n[]\n", "f.i:2: unterminated single quote"},
      {"[Models]\n  k = a b\n[]\n", "f.i:2: a value with spaces must be quoted"},
      {"[Models]\n  k = 1\n  k = 2\n[]\n", "f.i:3: duplicate key 'k'"},
      {"[]\n", "f.i:1: '[]' closes a section that was never opened"},
      {"\n[Models]\n  [m]\n  []\n", "f.i:2: section [Models] is never closed"},
      {"[Models]\n  k =\n[]\n", "f.i:2: expected a value"},
  };
  for (const auto & [text, what] : bad)
  {
    INFO(text);
    const std::string & hit = text; // Clang: a structured binding cannot be captured before C++20
    CHECK_THAT(fatal_message([&] { parse_hit(hit, "f.i"); }),
               Catch::Matchers::ContainsSubstring(what));
  }
}

TEST_CASE("read_stub resolves artifact_path against the stub's folder", "[stub]")
{
  TempDir dir;
  const auto stub = dir.write("out/model_aoti.i", "[Models]\n  [model]\n    type = AOTIModel\n"
                                                  "    artifact_path = 'model'\n  []\n[]\n");
  const StubEntry e = read_stub(stub.string(), "model");
  CHECK(e.model == "model");
  CHECK(e.artifact_folder == dir.path / "out" / "model");

  CHECK_THAT(fatal_message([&] { read_stub(stub.string(), "other"); }),
             Catch::Matchers::ContainsSubstring("no model 'other' in [Models] (found: model)"));
  CHECK_THAT(fatal_message([&] { read_stub((dir.path / "missing.i").string(), "model"); }),
             Catch::Matchers::ContainsSubstring("cannot open model file"));
  const auto no_path = dir.write("b.i", "[Models]\n  [model]\n    type = AOTIModel\n  []\n[]\n");
  CHECK_THAT(fatal_message([&] { read_stub(no_path.string(), "model"); }),
             Catch::Matchers::ContainsSubstring("b.i:2: model 'model' has no 'artifact_path'"));
  const auto eager = dir.write("c.i", "[Models]\n  [model]\n    type = LinearIsotropicElasticity\n"
                                      "  []\n[]\n");
  CHECK_THAT(
      fatal_message([&] { read_stub(eager.string(), "model"); }),
      Catch::Matchers::ContainsSubstring("c.i:3: model 'model' has type "
                                         "'LinearIsotropicElasticity', expected 'AOTIModel'"));
  const auto no_models = dir.write("d.i", "[Solvers]\n[]\n");
  CHECK_THAT(fatal_message([&] { read_stub(no_models.string(), "model"); }),
             Catch::Matchers::ContainsSubstring("no [Models] block"));
}

TEST_CASE("read_meta reads a valid schema-1 file", "[meta]")
{
  TempDir dir;
  dir.write("cpu/model_meta.json", meta_json());
  dir.write("cpu/forward.pt2", "");
  const Meta m = read_meta(dir.path / "cpu", "cpu");
  CHECK(m.model == "model");
  CHECK(m.dtype == at::kDouble);
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].shape == std::vector<int64_t>{6});
  REQUIRE(m.parameters.size() == 1);
  CHECK(m.parameters[0].shape.empty());
  CHECK(m.parameters[0].value == std::vector<double>{100.0});
  REQUIRE(m.derivatives.size() == 1);
  CHECK_FALSE(m.derivatives[0].batched);
  CHECK(m.has(Graph::forward));
  CHECK_FALSE(m.has(Graph::jacobian));
  CHECK(m.graphs.at(Graph::forward).args[1].role == SlotSpec::Role::parameter);
  CHECK_FALSE(m.status);
}

TEST_CASE("read_meta refuses bad artifacts with a message naming the file", "[meta]")
{
  TempDir dir;
  dir.write("cpu/forward.pt2", "");
  const auto check = [&](const std::string & json, const std::string & what)
  {
    INFO(what);
    dir.write("cpu/model_meta.json", json);
    CHECK_THAT(fatal_message([&] { read_meta(dir.path / "cpu", "cpu"); }),
               Catch::Matchers::ContainsSubstring(what) &&
                   Catch::Matchers::ContainsSubstring("model_meta.json"));
  };
  check(meta_json("2"), "unknown schema 2 (this library reads schema 1)");
  check(meta_json("1", "1.9.0"),
        "artifact built by torch 1.9.0, this program uses torch " + torch_mm());
  check(meta_json("1", "", "cuda"), "compiled for device 'cuda' but found in the folder for 'cpu'");
  check(meta_json("1", "", "cpu", "int8"), "unsupported dtype 'int8'");
  check(meta_json("1", "", "cpu", "float64", "nope.pt2"), "graph file");
  check("{\"schema\": 1}", "missing field 'torch_version'");
  check("[1]", "expected a JSON object");
  check("{\"schema\": 1,", "malformed JSON");
  check("{\"schema\": \"1\"}", "field 'schema' must be a number, found a string");

  std::string bad_value = meta_json();
  bad_value.replace(bad_value.find("[100.0]"), 7, "[1, 2]");
  check(bad_value, "field 'parameters[0].value' has 2 numbers, shape needs 1");
  std::string bad_role = meta_json();
  bad_role.replace(bad_role.find("\"output\""), 8, "\"outptu\"");
  check(bad_role, "unknown role 'outptu'");
  std::string bad_pair = meta_json();
  bad_pair.replace(bad_pair.find("\"wrt\": \"strain\""), 15, "\"wrt\": \"temp\"");
  check(bad_pair, "derivative pair stress:temp names an unknown variable");

  CHECK_THAT(fatal_message([&] { read_meta(dir.path / "cuda", "cuda"); }),
             Catch::Matchers::ContainsSubstring("does not exist: compile the model for device "
                                                "'cuda' with neml2-compile --device cuda"));
}

TEST_CASE("read_meta reads renamed_from and refuses a bad one", "[meta]")
{
  TempDir dir;
  dir.write("cpu/forward.pt2", "");
  // The meta of a model compiled with --rename-input strain:eps.
  std::string renamed = meta_json();
  const auto rename = [](std::string & json, const std::string & from, const std::string & to)
  {
    for (auto at = json.find(from); at != std::string::npos; at = json.find(from, at + to.size()))
      json.replace(at, from.size(), to);
  };
  rename(renamed, "\"strain\"", "\"eps\"");
  rename(renamed, R"({"name": "eps", "shape")",
         R"({"name": "eps", "renamed_from": "strain", "shape")");
  dir.write("cpu/model_meta.json", renamed);
  const Meta m = read_meta(dir.path / "cpu", "cpu");
  CHECK(m.inputs[0].name == "eps");
  CHECK(m.inputs[0].renamed_from == "strain");
  CHECK(m.inputs[0].original() == "strain");
  CHECK(m.outputs[0].renamed_from.empty());
  CHECK(m.outputs[0].original() == "stress");
  CHECK(m.find_renamed(m.inputs, "strain") == &m.inputs[0]);
  CHECK(m.find_renamed(m.inputs, "eps") == nullptr);
  CHECK(m.find_renamed(m.outputs, "stress") == nullptr); // not renamed
  CHECK(m.derivatives[0].wrt == "eps");

  const auto refused = [&](std::string json, const std::string & from, const std::string & to)
  {
    if (!from.empty())
      rename(json, from, to);
    dir.write("cpu/model_meta.json", json);
    return fatal_message([&] { read_meta(dir.path / "cpu", "cpu"); });
  };
  CHECK_THAT(refused(renamed, R"("renamed_from": "strain")", R"("renamed_from": "")"),
             Catch::Matchers::EndsWith("field 'inputs[0].renamed_from' is empty"));
  CHECK_THAT(
      refused(renamed, R"("renamed_from": "strain")", R"("renamed_from": 3)"),
      Catch::Matchers::EndsWith("field 'inputs[0].renamed_from' must be a string, found a number"));
  // Two parameters whose original names agree: model.E, and nu renamed from model.E.
  std::string two = meta_json();
  rename(two, R"([{"name": "model.E", "shape": [], "value": [100.0]}])",
         R"([{"name": "model.E", "shape": [], "value": [100.0]},
             {"name": "nu", "renamed_from": "model.E", "shape": [], "value": [0.3]}])");
  CHECK_THAT(refused(two, "", ""),
             Catch::Matchers::EndsWith("duplicate original name 'model.E' in 'parameters'"));
}

TEST_CASE("read_meta reads the solvers' settings and refuses bad ones", "[meta]")
{
  TempDir dir;
  dir.write("cpu/forward.pt2", "");
  const auto replace = [](std::string json, const std::string & from, const std::string & to)
  {
    const auto at = json.find(from);
    REQUIRE(at != std::string::npos);
    return json.replace(at, from.size(), to);
  };
  const std::string triple = R"({"name": "newton.abs_tol", "dtype": "float64", "value": 1e-10},
      {"name": "newton.rel_tol", "dtype": "float64", "value": 1e-8},
      {"name": "newton.max_its", "dtype": "int64", "value": 8})";
  const std::string args =
      R"({"role": "parameter", "name": "model.E"}, {"role": "setting", "name": "newton.abs_tol"},
      {"role": "setting", "name": "newton.rel_tol"}, {"role": "setting", "name": "newton.max_its"})";
  std::string json = replace(meta_json(), R"("status": null,)",
                             R"("status": null, "settings": [)" + triple + "],");
  json = replace(json, R"({"role": "parameter", "name": "model.E"})", args);
  dir.write("cpu/model_meta.json", json);
  const Meta m = read_meta(dir.path / "cpu", "cpu");
  REQUIRE(m.settings.size() == 3);
  CHECK(m.settings[0].name == "newton.abs_tol");
  CHECK(m.settings[1].value == 1e-8);
  CHECK(m.settings[2].dtype == at::kLong);
  CHECK(m.settings[2].value == 8);
  CHECK(m.find_setting("newton.rel_tol") == &m.settings[1]);

  // A meta without the field (written before it existed) has no settings.
  dir.write("cpu/model_meta.json", meta_json());
  CHECK(read_meta(dir.path / "cpu", "cpu").settings.empty());

  const auto refused = [&](const std::string & from, const std::string & to)
  {
    dir.write("cpu/model_meta.json", replace(json, from, to));
    return fatal_message([&] { read_meta(dir.path / "cpu", "cpu"); });
  };
  using Catch::Matchers::EndsWith;
  CHECK_THAT(refused(R"("value": 8)", R"("value": 0)"),
             EndsWith("field 'settings[2].value' is 0, expected an integer >= 1"));
  CHECK_THAT(refused(R"("value": 1e-10)", R"("value": -1)"),
             EndsWith("field 'settings[0].value' is -1, expected a finite number >= 0"));
  CHECK_THAT(refused(R"("dtype": "int64")", R"("dtype": "float64")"),
             EndsWith("field 'settings[2].dtype' is 'float64', expected int64"));
  CHECK_THAT(refused(R"("name": "newton.rel_tol", "dtype")", R"("name": "other.rel_tol", "dtype")"),
             EndsWith("field 'settings[1].name' is 'other.rel_tol', expected <solver>.rel_tol "
                      "(each solver's abs_tol, rel_tol and max_its in turn)"));
  CHECK_THAT(refused(R"({"role": "setting", "name": "newton.rel_tol"}, )", ""),
             EndsWith("graphs.forward.args: its 'setting' args are not the entries of "
                      "'settings' in order"));
  CHECK_THAT(refused(R"({"role": "setting", "name": "newton.abs_tol"})",
                     R"({"role": "setting", "name": "newton.tol"})"),
             EndsWith("graphs.forward.args names 'newton.tol', which is not a variable of that "
                      "role"));
}

TEST_CASE("read_meta reads the per-point variants and refuses bad ones", "[meta]")
{
  TempDir dir;
  dir.write("cpu/forward.pt2", "");
  dir.write("cpu/forward_per_point.pt2", "");
  // The meta of a model compiled with --per-point model.E.
  const auto with = [](const std::string & list, const std::string & variant)
  {
    std::string json = meta_json();
    const std::string status = R"("status": null,)";
    json.replace(json.find(status), status.size(), status + R"( "per_point": )" + list + ",");
    const std::string end = R"("returns": [{"role": "output", "name": "stress"}]}}})";
    json.replace(json.find(end), end.size(),
                 R"("returns": [{"role": "output", "name": "stress"}], "per_point": )" + variant +
                     "}}}");
    return json;
  };
  const std::string good = R"({"file": "forward_per_point.pt2",
     "args": [{"role": "input", "name": "strain"},
              {"role": "parameter", "name": "model.E", "per_point": true}],
     "returns": [{"role": "output", "name": "stress"}]})";
  dir.write("cpu/model_meta.json", with(R"(["model.E"])", good));
  const Meta m = read_meta(dir.path / "cpu", "cpu");
  CHECK(m.per_point == std::vector<std::string>{"model.E"});
  CHECK(m.per_point_capable("model.E"));
  CHECK_FALSE(m.per_point_capable("model.nu"));
  const auto & forward = m.graphs.at(Graph::forward);
  REQUIRE(forward.per_point);
  CHECK(forward.per_point->file == dir.path / "cpu" / "forward_per_point.pt2");
  CHECK_FALSE(forward.args[1].per_point);
  CHECK(forward.per_point->args[1].per_point);

  // a meta without per-point variants reads as before
  dir.write("cpu/model_meta.json", meta_json());
  CHECK(read_meta(dir.path / "cpu", "cpu").per_point.empty());

  const auto refused = [&](const std::string & json)
  {
    dir.write("cpu/model_meta.json", json);
    return fatal_message([&] { read_meta(dir.path / "cpu", "cpu"); });
  };
  const auto edited = [&](const std::string & from, const std::string & to)
  {
    std::string v = good;
    v.replace(v.find(from), from.size(), to);
    return v;
  };
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(refused(with(R"(["model.G"])", good)),
             ContainsSubstring("field 'per_point[0]' names 'model.G', which is not a promoted "
                               "parameter"));
  CHECK_THAT(refused(with(R"(["model.E", "model.E"])", good)),
             ContainsSubstring("lists 'model.E' twice"));
  CHECK_THAT(refused(with(R"([3])", good)), ContainsSubstring("'per_point[0]' is not a string"));
  CHECK_THAT(refused(with("[]", good)),
             ContainsSubstring("'graphs.forward.per_point' is present but 'per_point' lists no "
                               "parameter"));
  // the variant must mark exactly the per-point parameters
  CHECK_THAT(refused(with(R"(["model.E"])", edited(R"(, "per_point": true)", ""))),
             ContainsSubstring("'graphs.forward.per_point.args[1].per_point' must be true"));
  CHECK_THAT(refused(with(R"(["model.E"])", edited(R"("name": "strain"})",
                                                   R"("name": "strain", "per_point": true})"))),
             ContainsSubstring("'graphs.forward.per_point.args[0].per_point' must be absent"));
  CHECK_THAT(refused(with(R"(["model.E"])", edited(R"({"role": "input", "name": "strain"},)", ""))),
             ContainsSubstring("'graphs.forward.per_point.args' has 1 slots, the graph has 2"));
  CHECK_THAT(refused(with(R"(["model.E"])", edited("forward_per_point.pt2", "missing.pt2"))),
             ContainsSubstring("missing.pt2' is missing"));
  // a list of per-point parameters needs every graph's variant
  std::string no_variant = meta_json();
  const std::string status = R"("status": null,)";
  no_variant.replace(no_variant.find(status), status.size(),
                     status + R"( "per_point": ["model.E"],)");
  CHECK_THAT(refused(no_variant), ContainsSubstring("field 'graphs.forward.per_point' is missing"));
}
