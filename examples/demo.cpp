// Demo host program: load the spec's compiled elastic model and evaluate a million points,
// first without dispatch, then chunked through a Simple, then on every device at once.
//
//   neml2-compile tests/aoti/forward_single/model.i --model model --device cpu -d : -o aoti
//   demo aoti/model_aoti.i [batch]
//
// Exit status: 0 on success, 2 on a user mistake (one line on stderr), 1 otherwise.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
/// Wall time of the second of two calls: the first pays one-time costs (page faults in
/// fresh buffers, lazy initialisation) that a time-stepping host pays once.
template <class F>
double
seconds(F && f)
{
  f();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Evaluate the model of @p stub on @p batch random strains: direct, chunked, on every device.
int
demo(const std::string & stub, int64_t batch)
{
  // A batch of Mandel strains, one row per material point.
  const TensorMap inputs{{"strain", at::rand({batch, 6}, at::kDouble) * 1e-3}};

  auto m = load_model(stub, "model");
  TensorMap out;
  const double t_direct = seconds([&] { out = m.forward(inputs); });
  const at::Tensor & stress = out.at("stress");
  std::printf("model '%s' (%s), %s, loaded from %s\n", m.name().c_str(), m.meta().type.c_str(),
              c10::toString(m.meta().dtype), m.meta().folder.c_str());
  std::printf("forward, no dispatch:        %lld points in %8.2f ms\n", (long long)batch,
              1e3 * t_direct);

  auto sched = std::make_shared<Simple>(Simple::Config{"cpu", 65536});
  auto md = load_model(stub, "model", sched);
  TensorMap out_chunked;
  const double t_chunked = seconds([&] { out_chunked = md.forward(inputs); });
  std::printf("forward, Simple{cpu, 65536}: %zu chunks    in %8.2f ms, identical: %s\n",
              md.last_dispatch().chunks, 1e3 * t_chunked,
              at::equal(out_chunked.at("stress"), stress) ? "yes" : "NO");

  StaticHybrid::Config cfg;
  cfg.devices = {"cpu"};
  if (devices().size() > 1) // the CPU, then each GPU this process sees
    cfg.devices.push_back("cuda:0");
  cfg.batch_sizes = {65536, 262144};
  if (cfg.devices.size() == 1)
    cfg.batch_sizes.resize(1);
  auto mh = load_model(stub, "model", std::make_shared<StaticHybrid>(cfg));
  TensorMap out_hybrid;
  const double t_hybrid = seconds([&] { out_hybrid = mh.forward(inputs); });
  std::printf("forward, StaticHybrid on %zu device(s): %zu chunks in %8.2f ms, max diff %.1e\n",
              cfg.devices.size(), mh.last_dispatch().chunks, 1e3 * t_hybrid,
              (out_hybrid.at("stress") - stress).abs().max().item<double>());

  // One line that reads the numbers: this model does little arithmetic per byte, so
  // the CPU's time is memory traffic, and chunking only pays when devices share work.
  const double bytes = double(inputs.at("strain").nbytes() + stress.nbytes());
  const double change = 100.0 * (t_chunked / t_direct - 1.0);
  std::printf("reading: %.0f bytes per point at %.1f GB/s on %d threads (%u cores), so the "
              "CPU is memory bound and each call also page-faults its fresh output on first "
              "touch; chunks on one CPU %s (%+.0f%%), and chunking pays off when several "
              "devices share the batch\n",
              bytes / double(batch), 1e-9 * bytes / t_direct, at::get_num_threads(),
              std::thread::hardware_concurrency(),
              change > 0 ? "cost their slicing and gather" : "fit the caches better", change);

  const DerivMap J = md.jacobian(inputs);
  std::cout << "d(stress)/d(strain), batch-independent, returned once:\n"
            << J.at("stress").at("strain") << "\n";
  std::printf("first point: strain[0] = %.3e, stress[0] = %.3e\n",
              inputs.at("strain")[0][0].item<double>(), stress[0][0].item<double>());
  return 0;
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
      "demo",
      [&] { return demo(argv[1], argc > 2 ? example::integer("BATCH", argv[2], 1) : 1000000); });
}
