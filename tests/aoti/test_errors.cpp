// The bad-input catalogue of doc/errors.md: one test case per row, named after it, each
// checking the exact error type and message (paths replaced by <dir> and <artifacts>).
#include "fixtures.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <unistd.h>

#include <torch/version.h>

using namespace neml2_test;
namespace fs = std::filesystem;

namespace
{
/// What a call threw: the dynamic type's name, whether it is recoverable, and the message.
struct Thrown
{
  std::string type = "(nothing)";
  bool recoverable = false;
  std::string message;
};

/// Replace every occurrence of @p from in @p s by @p to.
std::string
replace_all(std::string s, const std::string & from, const std::string & to)
{
  if (from.empty())
    return s;
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

/// A copy of a fixture's artifacts in a fresh temporary folder, removed at scope exit.
/// Run @p f and describe what it threw; @p dir (if any) reads as <dir> in the message and
/// the test artifacts folder as <artifacts>.
Thrown
describe(const std::function<void()> & f, const std::string & dir = "")
{
  Thrown t;
  try
  {
    f();
  }
  catch (const neml2::aoti::Exception & e)
  {
    t.type = dynamic_cast<const AggregateError *>(&e)     ? "AggregateError"
             : dynamic_cast<const ConvergenceError *>(&e) ? "ConvergenceError"
             : dynamic_cast<const FatalError *>(&e)       ? "FatalError"
                                                          : "Exception";
    t.recoverable = e.recoverable();
    t.message = replace_all(e.what(), dir, "<dir>");
  }
  catch (const std::exception & e)
  {
    t.type = "foreign";
    t.message = e.what();
  }
  t.message = replace_all(t.message, NEML2_TEST_ARTIFACTS, "<artifacts>");
  return t;
}

struct Workspace
{
  explicit Workspace(const std::string & fixture = "forward_single")
  {
    static std::atomic<int> counter{0};
    dir = fs::temp_directory_path() /
          ("neml2_errors_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(fs::path(NEML2_TEST_ARTIFACTS) / fixture, dir, fs::copy_options::recursive);
  }
  ~Workspace()
  {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  Workspace(const Workspace &) = delete;
  Workspace & operator=(const Workspace &) = delete;

  std::string stub() const { return (dir / "model_aoti.i").string(); }
  fs::path cpu() const { return dir / "model" / "cpu"; }

  std::string read(const fs::path & p) const
  {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void write(const fs::path & p, const std::string & text) const
  {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  /// Replace the first @p from in the meta by @p to; the text must be there.
  void edit_meta(const std::string & from, const std::string & to) const
  {
    std::string text = read(cpu() / "model_meta.json");
    const auto p = text.find(from);
    REQUIRE(p != std::string::npos);
    text.replace(p, from.size(), to);
    write(cpu() / "model_meta.json", text);
  }

  /// Run @p f and describe what it threw, with this folder's path as <dir>.
  Thrown run(const std::function<void()> & f) const { return describe(f, dir.string()); }

  fs::path dir;
};

/// Check that @p t is an unrecoverable FatalError with exactly @p message.
void
check_fatal(const Thrown & t, const std::string & message)
{
  CHECK(t.type == "FatalError");
  CHECK_FALSE(t.recoverable);
  CHECK(t.message == message);
}

/// Check that @p t is an unrecoverable FatalError whose message contains each of @p parts.
void
check_fatal_contains(const Thrown & t, std::initializer_list<std::string> parts)
{
  CHECK(t.type == "FatalError");
  CHECK_FALSE(t.recoverable);
  for (const auto & p : parts)
    CHECK_THAT(t.message, Catch::Matchers::ContainsSubstring(p));
}

std::string
torch_mm()
{
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

/// Load through the pass-through entry point (what a host calls first).
void
load(const Workspace & w)
{
  auto m = load_model(w.stub(), "model");
  m.forward({{"strain", strains(3)}});
}

/// Offset of the data of the first archive entry whose name ends with @p suffix.
std::size_t
entry_data_offset(const std::string & zip, const std::string & suffix)
{
  const auto u16 = [&](std::size_t p)
  { return std::size_t((unsigned char)zip[p]) | std::size_t((unsigned char)zip[p + 1]) << 8; };
  // Every local header starts with "PK\3\4" and is followed by its name and extra field.
  const std::string sig("PK\x03\x04", 4);
  for (auto p = zip.find(sig); p != std::string::npos && p + 30 <= zip.size();
       p = zip.find(sig, p + 4))
  {
    const std::size_t name_len = u16(p + 26), extra_len = u16(p + 28);
    const std::string name = zip.substr(p + 30, name_len);
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return p + 30 + name_len + extra_len;
  }
  FAIL("no entry ending in " << suffix);
  return 0;
}
} // namespace

// ---------------------------------------------------------------------------
// The stub
// ---------------------------------------------------------------------------

TEST_CASE("E01 malformed stub", "[errors]")
{
  Workspace w;
  w.write(w.stub(), "[Models]\n  [model\n    type = AOTIModel\n  []\n[]\n");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model_aoti.i:2: expected ']' to close the section header");
}

TEST_CASE("E02 stub without the model block", "[errors]")
{
  Workspace w;
  check_fatal(w.run([&] { load_model(w.stub(), "other"); }),
              "<dir>/model_aoti.i: no model 'other' in [Models] (found: model)");
}

TEST_CASE("E03 stub without artifact_path", "[errors]")
{
  Workspace w;
  w.write(w.stub(), "[Models]\n  [model]\n    type = AOTIModel\n  []\n[]\n");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model_aoti.i:2: model 'model' has no 'artifact_path'");
}

TEST_CASE("E04 stub of a model that was not compiled", "[errors]")
{
  Workspace w;
  w.write(w.stub(), "[Models]\n  [model]\n    type = LinearIsotropicElasticity\n  []\n[]\n");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model_aoti.i:3: model 'model' has type 'LinearIsotropicElasticity', "
              "expected 'AOTIModel': compile it first with neml2-compile");
}

TEST_CASE("E05 missing stub file", "[errors]")
{
  Workspace w;
  fs::remove(w.stub());
  check_fatal(w.run([&] { load(w); }), "cannot open model file '<dir>/model_aoti.i'");
}

// ---------------------------------------------------------------------------
// The artifact folder and model_meta.json
// ---------------------------------------------------------------------------

TEST_CASE("E06 missing device folder", "[errors]")
{
  Workspace w;
  fs::remove_all(w.cpu());
  check_fatal(w.run([&] { load(w); }),
              "artifact folder '<dir>/model/cpu' does not exist: compile the model for device "
              "'cpu' with neml2-compile --device cpu");
}

TEST_CASE("E07 missing model_meta.json", "[errors]")
{
  Workspace w;
  fs::remove(w.cpu() / "model_meta.json");
  check_fatal(w.run([&] { load(w); }), "cannot open '<dir>/model/cpu/model_meta.json'");
}

TEST_CASE("E08 malformed model_meta.json", "[errors]")
{
  Workspace w;
  const std::string text = w.read(w.cpu() / "model_meta.json");
  w.write(w.cpu() / "model_meta.json", text.substr(0, text.size() / 2));
  const Thrown t = w.run([&] { load(w); });
  check_fatal_contains(t, {"<dir>/model/cpu/model_meta.json:", ": malformed JSON: "});
}

TEST_CASE("E09 unknown schema", "[errors]")
{
  Workspace w;
  w.edit_meta("\"schema\": 1,", "\"schema\": 2,");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model/cpu/model_meta.json: unknown schema 2 (this library reads schema 1): "
              "recompile with a matching neml2-compile");
}

TEST_CASE("E10 mismatched schema field", "[errors]")
{
  Workspace w;
  SECTION("a string")
  {
    w.edit_meta("\"schema\": 1,", "\"schema\": \"1\",");
    check_fatal(w.run([&] { load(w); }), "<dir>/model/cpu/model_meta.json: field 'schema' "
                                         "must be a number, found a string");
  }
  SECTION("not an integer")
  {
    w.edit_meta("\"schema\": 1,", "\"schema\": 1.5,");
    check_fatal(w.run([&] { load(w); }),
                "<dir>/model/cpu/model_meta.json: field 'schema' must be an integer");
  }
  SECTION("missing")
  {
    w.edit_meta("\"schema\": 1,", "");
    check_fatal(w.run([&] { load(w); }), "<dir>/model/cpu/model_meta.json: missing field 'schema'");
  }
}

TEST_CASE("E11 artifact built by another torch major.minor", "[errors]")
{
  Workspace w;
  const std::string text = w.read(w.cpu() / "model_meta.json");
  const auto key = text.find("\"torch_version\": \"");
  REQUIRE(key != std::string::npos);
  const auto begin = key + 18, end = text.find('"', begin);
  w.edit_meta(text.substr(key, end + 1 - key), "\"torch_version\": \"1.13.1+cpu\"");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model/cpu/model_meta.json: artifact built by torch 1.13.1+cpu, this "
              "program uses torch " +
                  torch_mm() + ": recompile the model with the torch this program links against");
}

TEST_CASE("E12 artifact of another device in the cpu folder", "[errors]")
{
  Workspace w;
  w.edit_meta("\"device\": \"cpu\"", "\"device\": \"cuda\"");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model/cpu/model_meta.json: artifact compiled for device 'cuda' but found in "
              "the folder for 'cpu'");
}

TEST_CASE("E13 stub pointing at another model's artifacts", "[errors]")
{
  Workspace w;
  w.edit_meta("\"model\": \"model\"", "\"model\": \"other\"");
  check_fatal(w.run([&] { load(w); }),
              "<dir>/model_aoti.i: model 'model' points at artifacts of model 'other' "
              "(<dir>/model/cpu/model_meta.json)");
}

TEST_CASE("E14 missing graph file", "[errors]")
{
  Workspace w;
  fs::remove(w.cpu() / "forward.pt2");
  check_fatal(w.run([&] { load(w); }), "<dir>/model/cpu/model_meta.json: graph file "
                                       "'<dir>/model/cpu/forward.pt2' is missing");
  // The in-place variant model_meta.json names (forward_single is compiled with --into forward).
  Workspace v;
  fs::remove(v.cpu() / "forward_into.pt2");
  check_fatal(v.run([&] { load(v); }), "<dir>/model/cpu/model_meta.json: graph file "
                                       "'<dir>/model/cpu/forward_into.pt2' is missing");
}

// ---------------------------------------------------------------------------
// The .pt2 packages
// ---------------------------------------------------------------------------

TEST_CASE("E15 truncated .pt2", "[errors]")
{
  Workspace w;
  const fs::path f = w.cpu() / "forward.pt2";
  fs::resize_file(f, fs::file_size(f) / 2);
  check_fatal(w.run([&] { load(w); }),
              "model 'model' on cpu: cannot load graph 'forward' from "
              "'<dir>/model/cpu/forward.pt2': corrupted package: no end-of-central-directory "
              "record: the file is truncated or not a zip archive: recompile the model with "
              "neml2-compile");
}

TEST_CASE("E16 empty .pt2", "[errors]")
{
  Workspace w;
  w.write(w.cpu() / "forward.pt2", "");
  check_fatal(w.run([&] { load(w); }),
              "model 'model' on cpu: cannot load graph 'forward' from "
              "'<dir>/model/cpu/forward.pt2': corrupted package: not a zip archive (0 bytes): "
              "recompile the model with neml2-compile");
}

TEST_CASE("E17 .pt2 that is not a zip archive", "[errors]")
{
  Workspace w;
  w.write(w.cpu() / "forward.pt2", "this file was overwritten by a text editor\n");
  check_fatal(w.run([&] { load(w); }),
              "model 'model' on cpu: cannot load graph 'forward' from "
              "'<dir>/model/cpu/forward.pt2': corrupted package: no end-of-central-directory "
              "record: the file is truncated or not a zip archive: recompile the model with "
              "neml2-compile");
}

// Before the check this crashed the process (SIGSEGV) at the warm-up call: the loader
// extracts the shared library without verifying its checksum.
TEST_CASE("E18 corrupted .pt2 (bytes changed inside the compiled library)", "[errors]")
{
  Workspace w;
  const fs::path f = w.cpu() / "forward.pt2";
  std::string zip = w.read(f);
  const std::size_t so = entry_data_offset(zip, ".so");
  // Overwrite 64 KiB past the ELF headers with ud2 instructions, every 64 bytes.
  for (std::size_t off = so + 0x18000; off < so + 0x28000 && off + 1 < zip.size(); off += 64)
  {
    zip[off] = '\x0f';
    zip[off + 1] = '\x0b';
  }
  w.write(f, zip);
  const Thrown t = w.run([&] { load(w); });
  check_fatal_contains(t, {"model 'model' on cpu: cannot load graph 'forward' from "
                           "'<dir>/model/cpu/forward.pt2': corrupted package: entry '",
                           ".wrapper.so' fails its CRC-32 check (stored 0x",
                           "): recompile the model with neml2-compile"});
}

// Before the check, forward returned the (6, 6) stiffness for any batch: a wrong answer.
TEST_CASE("E19 graph file replaced by another graph of the model", "[errors]")
{
  Workspace w;
  fs::copy_file(w.cpu() / "jacobian.pt2", w.cpu() / "forward.pt2",
                fs::copy_options::overwrite_existing);
  check_fatal(w.run([&] { load(w); }),
              "model 'model': graph 'forward' return 0 ('stress') is (6, 6) Double on cpu, "
              "model_meta.json declares (1, 6) Double on cpu: the graph files and "
              "model_meta.json do not match; recompile the model with neml2-compile");
}

// Before the check, torch 2.13 refused the call ("expected inputs vector size to be 2, but
// got 1") and torch 2.11 ran the graph past its one argument and crashed.
TEST_CASE("E20 graph file replaced by one with other arguments", "[errors]")
{
  Workspace w;
  fs::copy_file(w.cpu() / "jvp.pt2", w.cpu() / "forward.pt2", fs::copy_options::overwrite_existing);
  check_fatal(w.run([&] { load(w); }),
              "model 'model' on cpu: graph 'forward' in '<dir>/model/cpu/forward.pt2' takes 2 "
              "inputs, model_meta.json declares 1: the graph files and model_meta.json do not "
              "match; recompile the model with neml2-compile");
}

TEST_CASE("E21 model_meta.json edited to another input shape", "[errors]")
{
  Workspace w;
  w.edit_meta("\"shape\": [\n        6\n      ]", "\"shape\": [\n        3\n      ]");
  check_fatal(w.run([&] { load(w); }),
              "model 'model': graph 'jacobian' return 0 ('stress:strain') is (6, 6) Double on "
              "cpu, model_meta.json declares (6, 3) Double on cpu: the graph files and "
              "model_meta.json do not match; recompile the model with neml2-compile");
}

// ---------------------------------------------------------------------------
// Inputs of a call
// ---------------------------------------------------------------------------

namespace
{
/// A call on a loaded model, described with Thrown (no temporary folder involved).
Thrown
call(const std::function<void()> & f)
{
  return describe(f);
}

/// Every way a host reaches a model: the direct Model, no scheduler, and the policies.
template <class F>
void
for_each_entry(const std::string & fixture, F && f)
{
  {
    INFO("Model");
    Model m(stub(fixture), "model", "cpu");
    f(m);
  }
  {
    INFO("PassThrough");
    auto m = PassThroughCase::make(stub(fixture), 0);
    f(m);
  }
  {
    INFO("SyncPolicy<Simple>");
    auto m = SyncSimpleCase::make(stub(fixture), 4);
    f(m);
  }
  {
    INFO("AsyncPolicy<StaticHybrid>");
    auto m = AsyncHybridCase::make(stub(fixture), 4);
    f(m);
  }
}
} // namespace

TEST_CASE("E22 missing input", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call([&] { m.forward({}); }),
                               "model 'model': missing input 'strain' (expected inputs: strain)");
                 });
}

TEST_CASE("E23 extra input", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(
                       call(
                           [&] {
                             m.forward({{"strain", strains(7)}, {"temperature", strains(7)}});
                           }),
                       "model 'model': unknown input 'temperature' (expected inputs: "
                       "strain)");
                 });
}

TEST_CASE("E24 misnamed input", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"stran", strains(7)}});
                                   }),
                               "model 'model': unknown input 'stran' (expected inputs: strain)");
                 });
}

TEST_CASE("E25 wrong dtype", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", strains(7).to(at::kFloat)}});
                                   }),
                               "model 'model': input 'strain' has dtype Float, expected Double");
                 });
}

TEST_CASE("E26 wrong base shape", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", at::zeros({7, 3}, f64())}});
                                   }),
                               "model 'model': input 'strain' has shape (7, 3), expected (6,) or "
                               "(B, 6,)");
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", at::zeros({2, 7, 6}, f64())}});
                                   }),
                               "model 'model': input 'strain' has shape (2, 7, 6), expected (6,) "
                               "or (B, 6,)");
                 });
}

TEST_CASE("E27 undefined tensor", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", at::Tensor()}});
                                   }),
                               "model 'model': input 'strain' is an undefined tensor");
                 });
}

TEST_CASE("E28 disagreeing batch sizes", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.jvp({{"strain", strains(7)}}, {{"strain", strains(5)}});
                                   }),
                               "model 'model': batch sizes disagree: tangent 'strain' has 5 but "
                               "input 'strain' has 7");
                 });
}

TEST_CASE("E29 inputs on mixed devices", "[errors]")
{
  // A second device that every build has: meta (no GPU needed); with a GPU, cuda:0 too.
  std::vector<at::Device> others{at::Device(at::kMeta)};
  if (have_cuda())
    others.emplace_back(at::kCUDA, 0);
  for_each_entry("elastic_promoted",
                 [&](auto & m)
                 {
                   for (const auto & d : others)
                     check_fatal(
                         call(
                             [&] {
                               m.jvp({{"strain", strains(7)}}, {{"strain", strains(7).to(d)}});
                             }),
                         "model 'model': inputs on mixed devices: tangent 'strain' is on " +
                             d.str() + " but input 'strain' is on cpu");
                 });
}

TEST_CASE("E30 inputs on a device without data", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(
                       call(
                           [&] {
                             m.forward({{"strain", at::zeros({7, 6}, f64().device(at::kMeta))}});
                           }),
                       "model 'model': input 'strain' is on meta, expected a cpu or cuda "
                       "tensor");
                 });
}

TEST_CASE("E31 NaN and Inf inputs", "[errors]")
{
  // Documented behaviour: no check, no error; IEEE arithmetic carries NaN/Inf to the
  // outputs of the points that hold them, and every other point is unaffected (bitwise).
  for_each_entry(
      "elastic_promoted",
      [](auto & m)
      {
        const at::Tensor clean = strains(9);
        at::Tensor bad = clean.clone();
        bad[2][0] = std::nan("");
        bad[6][1] = INFINITY;
        const at::Tensor before = bad.clone();
        const at::Tensor want = m.forward({{"strain", clean}}).at("stress");
        at::Tensor got;
        CHECK(call([&] { got = m.forward({{"strain", bad}}).at("stress"); }).type == "(nothing)");
        REQUIRE(got.defined());
        CHECK(got[2].isnan().any().item<bool>());
        CHECK((got[6].isinf() | got[6].isnan()).any().item<bool>());
        for (const int64_t row : {0, 1, 3, 4, 5, 7, 8})
          CHECK(identical(got[row], want[row]));
        CHECK(at::equal(bad.isnan(), before.isnan())); // the input is untouched
        // The model is fine afterwards.
        CHECK(identical(m.forward({{"strain", clean}}).at("stress"), want));
        // A NaN parameter poisons every point, again without an error.
        at::Tensor & E = m.named_parameters().at("model.E");
        const at::Tensor saved = E.clone();
        E.fill_(std::nan(""));
        const at::Tensor poisoned = m.forward({{"strain", clean}}).at("stress");
        CHECK(poisoned.isnan().all().item<bool>());
        E.copy_(saved);
        CHECK(identical(m.forward({{"strain", clean}}).at("stress"), want));
      });

  // An implicit model (a Newton solve per point) does the same: a NaN strain makes no
  // point plastic (NaN > 0 is false), so the status says converged, no ConvergenceError
  // is raised, and the NaN shows in that point's stress.
  for_each_entry("viscoplastic",
                 [](auto & m)
                 {
                   const auto o = f64();
                   TensorMap in{{"strain", strains(6) * 0.02},
                                {"old_plastic_strain", at::zeros({6, 6}, o)},
                                {"old_equivalent_plastic_strain", at::zeros({6}, o)},
                                {"time_step", at::full({6}, 0.1, o)}};
                   const TensorMap want = m.forward(in);
                   in["strain"] = in.at("strain").clone();
                   in.at("strain")[3][0] = std::nan("");
                   TensorMap got;
                   CHECK(call([&] { got = m.forward(in); }).type == "(nothing)");
                   for (const auto & [name, t] : want)
                   {
                     INFO(name);
                     REQUIRE(got.count(name));
                     // The plastic strains of a point taken for elastic stay the old ones.
                     if (name == "stress")
                       CHECK(got.at(name)[3].isnan().any().template item<bool>());
                     for (const int64_t row : {0, 1, 2, 4, 5})
                       CHECK(identical(got.at(name)[row], t[row]));
                   }
                 });
}

// ---------------------------------------------------------------------------
// Derivatives and parameters
// ---------------------------------------------------------------------------

TEST_CASE("E32 unknown tangent or cotangent", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.jvp({{"strain", strains(7)}}, {{"stress", strains(7)}});
                                   }),
                               "model 'model': unknown tangent 'stress' (expected inputs: strain)");
                   check_fatal(
                       call(
                           [&] {
                             m.param_vjp({{"strain", strains(7)}}, {{"strain", strains(7)}});
                           }),
                       "model 'model': unknown cotangent 'strain' (expected outputs: "
                       "stress)");
                 });
}

TEST_CASE("E33 derivative pair that was not compiled", "[errors]")
{
  // forward_single without its derivative graphs: what neml2-compile writes without -d.
  Workspace w;
  w.edit_meta("\"derivatives\": [\n    {\n      \"of\": \"stress\",\n      \"wrt\": \"strain\",\n"
              "      \"batched\": false\n    }\n  ],",
              "\"derivatives\": [],");
  const std::string text = w.read(w.cpu() / "model_meta.json");
  const auto jvp = text.find(",\n    \"jvp\": {");
  REQUIRE(jvp != std::string::npos);
  w.write(w.cpu() / "model_meta.json", text.substr(0, jvp) + "\n  }\n}\n");
  auto m = load_model(w.stub(), "model");
  check_fatal(w.run(
                  [&] {
                    m.jacobian({{"strain", strains(7)}});
                  }),
              "model 'model': graph 'jacobian' was not compiled: add '-d :' (or -d "
              "OUTPUT:INPUT) to neml2-compile");
  check_fatal(w.run(
                  [&] {
                    m.jvp({{"strain", strains(7)}}, {{"strain", strains(7)}});
                  }),
              "model 'model': graph 'jvp' was not compiled: add '-d :' (or -d OUTPUT:INPUT) to "
              "neml2-compile");
}

TEST_CASE("E33, second form: a graph that neml2-compile --graphs left out", "[errors]")
{
  // forward_single compiled with -d : --graphs forward: the pairs listed, no graph for them.
  Workspace w;
  const std::string text = w.read(w.cpu() / "model_meta.json");
  const auto jvp = text.find(",\n    \"jvp\": {");
  REQUIRE(jvp != std::string::npos);
  w.write(w.cpu() / "model_meta.json", text.substr(0, jvp) + "\n  }\n}\n");
  auto m = load_model(w.stub(), "model");
  for (const char * graph : {"jacobian", "jvp"})
    check_fatal(w.run(
                    [&]
                    {
                      if (std::string(graph) == "jvp")
                        m.jvp({{"strain", strains(7)}}, {{"strain", strains(7)}});
                      else
                        m.jacobian({{"strain", strains(7)}});
                    }),
                std::string("model 'model': graph '") + graph +
                    "' was not compiled: neml2-compile --graphs left it out: add " + graph +
                    " to --graphs (or leave --graphs out)");
}

TEST_CASE("E34 parameter derivative of a model without promoted parameters", "[errors]")
{
  for_each_entry("forward_single",
                 [](auto & m)
                 {
                   check_fatal(call(
                                   [&] {
                                     m.param_jacobian({{"strain", strains(7)}});
                                   }),
                               "model 'model': graph 'param_jacobian' was not compiled: no "
                               "parameter was promoted: add '-p :' (or -p NAME) to neml2-compile");
                 });
}

// Before the check, a misspelt name was ignored and the call ran with the old value.
TEST_CASE("E35 unknown parameter", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   const at::Tensor eps = strains(7);
                   const at::Tensor want = m.forward({{"strain", eps}}).at("stress");
                   m.named_parameters()["model.e"] = at::scalar_tensor(150e3, f64());
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", eps}});
                                   }),
                               "model 'model': unknown parameter 'model.e' in named_parameters() "
                               "(promoted parameters: model.E, model.nu): a parameter baked into "
                               "the graph cannot be changed at run time; promote it with -p NAME "
                               "(or -p :) to neml2-compile");
                   m.named_parameters().erase("model.e");
                   CHECK(identical(m.forward({{"strain", eps}}).at("stress"), want));
                 });
}

TEST_CASE("E36 parameter of the wrong shape, dtype or device", "[errors]")
{
  Model direct(stub("elastic_promoted"), "model", "cpu");
  const at::Tensor eps = strains(7);
  for (const at::Tensor & bad :
       {at::ones({3, 2}, f64()), at::scalar_tensor(1.0, at::TensorOptions().dtype(at::kFloat)),
        at::scalar_tensor(1.0, f64().device(at::kMeta))})
  {
    INFO(bad.sizes() << " " << bad.scalar_type() << " " << bad.device());
    const at::Tensor saved = direct.named_parameters().at("model.E");
    direct.named_parameters()["model.E"] = bad;
    check_fatal(call(
                    [&] {
                      direct.forward({{"strain", eps}});
                    }),
                "model 'model': parameter 'model.E' must stay a tensor of shape () or (B,) per "
                "point, Double, on cpu");
    direct.named_parameters()["model.E"] = saved;

    auto m = SyncSimpleCase::make(stub("elastic_promoted"), 4);
    m.named_parameters()["model.E"] = bad;
    check_fatal(call(
                    [&] {
                      m.forward({{"strain", eps}});
                    }),
                "model 'model': parameter 'model.E' must stay a tensor of shape () or (B,) per "
                "point and dtype Double, on cpu or cuda");
  }
}

TEST_CASE("E37 parameter removed", "[errors]")
{
  for_each_entry("elastic_promoted",
                 [](auto & m)
                 {
                   m.named_parameters().erase("model.nu");
                   check_fatal(call(
                                   [&] {
                                     m.forward({{"strain", strains(7)}});
                                   }),
                               "model 'model': parameter 'model.nu' was removed from "
                               "named_parameters()");
                 });
}

// ---------------------------------------------------------------------------
// Schedulers and devices
// ---------------------------------------------------------------------------

TEST_CASE("E38 invalid Simple configuration", "[errors]")
{
  check_fatal(call(
                  [] {
                    Simple(Simple::Config{"cpu", -1});
                  }),
              "Simple: batch_size = -1 must be >= 0 (0 means no chunking)");
  check_fatal(call(
                  [] {
                    Simple(Simple::Config{"cpu", 8, 4});
                  }),
              "Simple: capacity = 4 < batch_size = 8");
  check_fatal(call(
                  [] {
                    Simple(Simple::Config{"cpu", 8, 0, 17});
                  }),
              "Simple: gpu_lanes = 17 must be between 0 (automatic) and 16");
  check_fatal(call([] { load_model(stub("forward_single"), "model", std::shared_ptr<Simple>()); }),
              "load_model: the scheduler is null");
}

TEST_CASE("E39 invalid StaticHybrid configuration", "[errors]")
{
  using Cfg = StaticHybrid::Config;
  const auto make = [](Cfg c) { return call([&] { StaticHybrid s(std::move(c)); }); };
  check_fatal(make(Cfg{{}, {4}, {}, {}}), "StaticHybrid: devices is empty");
  check_fatal(make(Cfg{{"cpu"}, {0}, {}, {}}), "StaticHybrid: batch_sizes[0] = 0 must be > 0");
  check_fatal(make(Cfg{{"cpu"}, {}, {}, {}}),
              "StaticHybrid: batch_sizes has 0 entries; expected 1 or 1 (one per device)");
  check_fatal(make(Cfg{{"cpu"}, {8}, {4}, {}}),
              "StaticHybrid: capacities[0] = 4 < batch_sizes[0] = 8");
  check_fatal(make(Cfg{{"cpu"}, {8}, {16, 16}, {}}),
              "StaticHybrid: capacities has 2 entries; expected 1 or 1 (one per device)");
  check_fatal(make(Cfg{{"cpu", "cpu"}, {8}, {}, {}}),
              "StaticHybrid: devices[1] = 'cpu' repeats devices[0]");
  Cfg threads{{"cpu"}, {8}, {}, {}};
  threads.cpu_threads = -2;
  check_fatal(make(threads), "StaticHybrid: cpu_threads = -2 must be >= 0 (0: automatic)");
  Cfg lanes{{"cpu"}, {8}, {}, {}};
  lanes.gpu_lanes = -1;
  check_fatal(make(lanes), "StaticHybrid: gpu_lanes = -1 must be between 0 (automatic) and 16");
}

TEST_CASE("E40 unknown device strings", "[errors]")
{
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"tpu", "only 'cpu', 'cuda' and 'cuda:N' are supported"},
      {"CPU", "only 'cpu', 'cuda' and 'cuda:N' are supported"},
      {" cpu", "only 'cpu', 'cuda' and 'cuda:N' are supported"},
      {"", "only 'cpu', 'cuda' and 'cuda:N' are supported"},
      {"cpu:1", "only 'cpu', 'cuda' and 'cuda:N' are supported"},
      {"cuda:", "expected 'cuda' or 'cuda:N'"},
      {"cuda:x", "expected 'cuda' or 'cuda:N'"},
      {"cuda:-1", "expected 'cuda' or 'cuda:N'"},
      {"cuda0", "expected 'cuda' or 'cuda:N'"},
      {"cuda:123456", "expected 'cuda' or 'cuda:N'"},
  };
  for (const auto & entry : bad)
  {
    const std::string &device = entry.first, &why = entry.second;
    INFO("'" << device << "'");
    check_fatal(call([&] { Model(stub("forward_single"), "model", device); }),
                "model 'model': invalid device '" + device + "': " + why);
    check_fatal(call(
                    [&] {
                      Simple(Simple::Config{device, 4});
                    }),
                "Simple: device: invalid device '" + device + "': " + why);
    check_fatal(call(
                    [&] {
                      StaticHybrid(StaticHybrid::Config{{device}, {4}, {}, {}});
                    }),
                "StaticHybrid: devices[0]: invalid device '" + device + "': " + why);
  }
}

TEST_CASE("E41 GPU index that does not exist", "[errors]")
{
  const int n = neml2::aoti::detail::cuda_device_count();
  const std::string device = "cuda:" + std::to_string(n);
  const std::string why = n == 0 ? std::string("no CUDA device is visible to this process")
                                 : "this process sees " + std::to_string(n) + " CUDA device(s)";
  check_fatal(call([&] { Model(stub("forward_single"), "model", device); }),
              "model 'model': invalid device '" + device + "': " + why);
  check_fatal(call(
                  [&] {
                    Simple(Simple::Config{device, 4});
                  }),
              "Simple: device: invalid device '" + device + "': " + why);
  check_fatal(call(
                  [&] {
                    StaticHybrid(StaticHybrid::Config{{"cpu", device}, {4}, {}, {}});
                  }),
              "StaticHybrid: devices[1]: invalid device '" + device + "': " + why);
}

TEST_CASE("E42 result buffer that does not fit", "[errors]")
{
  const auto check = [](auto & m)
  {
    const at::Tensor eps = strains(7);
    const TensorMap in{{"strain", eps}};
    const std::string head = "model 'model': results of 'forward': ";
    const auto into = [&](at::Tensor buffer, const std::string & name = "stress")
    {
      TensorMap out{{name, std::move(buffer)}};
      return call([&] { m.forward(in, out); });
    };
    check_fatal(into(at::zeros({7, 3}, f64())),
                head + "the buffer for 'stress' has shape (7, 3), expected (7, 6)");
    check_fatal(into(at::zeros({7, 6}, at::kFloat)),
                head + "the buffer for 'stress' has dtype Float, expected Double");
    check_fatal(into(at::zeros({7, 6}, f64().device(at::kMeta))),
                head + "the buffer for 'stress' is on meta, expected cpu (where the inputs are)");
    check_fatal(into(at::Tensor()), head + "the buffer for 'stress' is an undefined tensor");
    check_fatal(into(at::zeros({7, 6}, f64()), "strain"),
                head + "no result 'strain' (the graph returns 'stress')");
    check_fatal(into(at::zeros({6}, f64()).expand({7, 6})),
                head + "the buffer for 'stress' has elements that share memory (an expanded "
                       "tensor?)");
    check_fatal(into(eps),
                head + "the buffer for 'stress' overlaps the memory of argument 'strain'");
  };
  {
    INFO("PassThrough");
    auto m = PassThroughCase::make(stub("elastic_promoted"), 0);
    check(m);
  }
  {
    INFO("SyncPolicy<Simple>");
    auto m = SyncSimpleCase::make(stub("elastic_promoted"), 4);
    check(m);
  }
  {
    INFO("AsyncPolicy<StaticHybrid>");
    auto m = AsyncHybridCase::make(stub("elastic_promoted"), 4);
    check(m);
  }
}

TEST_CASE("E43 solver setting out of range", "[errors]")
{
  const auto check = [](auto & m)
  {
    const SolverSettings ok = m.solver_settings().at("newton");
    const auto set = [&](const std::string & solver, SolverSettings s)
    { return call([&] { m.set_solver_settings(solver, s); }); };
    check_fatal(set("newtn", ok),
                "model 'model': unknown solver 'newtn' (expected solvers: newton)");
    check_fatal(set("newton", {-1e-8, ok.rel_tol, ok.max_its}),
                "model 'model': setting 'newton.abs_tol' is -1e-08, expected a finite number >= 0");
    check_fatal(set("newton", {ok.abs_tol, INFINITY, ok.max_its}),
                "model 'model': setting 'newton.rel_tol' is inf, expected a finite number >= 0");
    check_fatal(set("newton", {ok.abs_tol, ok.rel_tol, 0}),
                "model 'model': setting 'newton.max_its' is 0, expected an integer >= 1");
    CHECK(m.solver_settings().at("newton").max_its == ok.max_its);
  };
  {
    INFO("Model");
    Model m(stub("viscoplastic"), "model", "cpu");
    check(m);
    Model explicit_model(stub("elastic_promoted"), "model", "cpu");
    check_fatal(call(
                    [&] {
                      explicit_model.set_solver_settings("newton", {0, 0, 1});
                    }),
                "model 'model': unknown solver 'newton' (expected solvers: none, the model "
                "solves no equation)");
  }
  {
    INFO("AsyncPolicy<StaticHybrid>");
    auto m = AsyncHybridCase::make(stub("viscoplastic"), 4);
    check(m);
  }
}
