// Hybrid CPU + GPU: one batch spread over the CPU and the first GPU at the same time by a
// StaticHybrid, checked against the plain single-device call. Without a visible
// GPU it says so and runs the same code on the CPU alone.
//
//   neml2-compile tests/aoti/forward_single/model.i --model model --device cpu cuda -d : -o aoti
//   hybrid aoti/model_aoti.i [BATCH]
//
// Exit status: 0 when the hybrid result matches, 2 on a user mistake (one line on stderr:
// a bad BATCH, a missing or damaged artifact), 1 otherwise (a mismatch).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
/// Random inputs of @p batch points for every input the model declares (small strains).
TensorMap
random_inputs(const Meta & meta, int64_t batch)
{
  TensorMap inputs;
  for (const auto & v : meta.inputs)
  {
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    inputs[v.name] = (at::rand(shape, at::TensorOptions().dtype(meta.dtype)) - 0.5) * 2e-3;
  }
  return inputs;
}

/// Seconds taken by f().
template <class F>
double
seconds(F && f)
{
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Spread @p batch random points of @p stub's model over the CPU and the first GPU, and
/// compare with the direct call: 0 when they agree, 1 when not.
int
spread(const std::string & stub, int64_t batch)
{
  // The devices: the CPU, plus the first GPU when this process sees one. The GPU gets
  // larger chunks and the higher priority, so it is kept busy; the CPU takes what it can.
  StaticHybrid::Config cfg;
  if (devices().size() > 1)
  {
    cfg.devices = {"cpu", "cuda:0"};
    cfg.batch_sizes = {16384, 131072};
    cfg.priorities = {0, 1};
  }
  else
  {
    std::cout << "no GPU visible to this process: running the hybrid scheduler on the CPU "
                 "alone (on a GPU machine, compile with --device cpu cuda)\n";
    cfg.devices = {"cpu"};
    cfg.batch_sizes = {16384};
  }

  // The reference: no scheduler, the whole batch in one call on the CPU.
  auto direct = load_model(stub, "model");
  const TensorMap inputs = random_inputs(direct.meta(), batch);
  TensorMap want;
  const double t_direct = seconds([&] { want = direct.forward(inputs); });

  auto hybrid = load_model(stub, "model", std::make_shared<StaticHybrid>(cfg));
  hybrid.forward(inputs); // the first call pays one-time costs (GPU context, allocator)
  TensorMap got;
  const double t_hybrid = seconds([&] { got = hybrid.forward(inputs); });

  std::printf("model '%s' (%s), %lld points\n", hybrid.name().c_str(), hybrid.meta().type.c_str(),
              (long long)batch);
  std::printf("  cpu, no dispatch: %8.2f ms\n", 1e3 * t_direct);
  std::printf("  hybrid:           %8.2f ms, chunks per device:", 1e3 * t_hybrid);
  const DispatchInfo & info = hybrid.last_dispatch();
  for (std::size_t d = 0; d < cfg.devices.size(); ++d)
    std::printf(" %s %zu", cfg.devices[d].c_str(), info.device_chunks[d]);
  std::printf("\n");

  // CPU chunks reproduce the direct call bitwise; a GPU rounds differently.
  const double rtol = hybrid.meta().dtype == at::kDouble ? 1e-10 : 1e-5;
  bool ok = true;
  for (const auto & [name, value] : want)
  {
    const at::Tensor & h = got.at(name);
    const double diff = batch > 0 ? (h - value).abs().max().item<double>() : 0.0;
    const double scale = batch > 0 ? value.abs().max().item<double>() : 0.0;
    const bool same = cfg.devices.size() == 1 ? at::equal(h, value) : diff <= rtol * scale;
    std::printf("  %-20s max |hybrid - direct| = %.2e  %s\n", name.c_str(), diff,
                same ? "ok" : "MISMATCH");
    ok = ok && same;
  }
  return ok ? 0 : 1;
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2 || argc > 3)
  {
    std::cerr << "usage: " << argv[0] << " STUB [BATCH]\n";
    return 2;
  }
  return example::guarded(
      "hybrid",
      [&] { return spread(argv[1], argc > 2 ? example::integer("BATCH", argv[2], 0) : 1 << 20); });
}
