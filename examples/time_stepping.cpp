// Time stepping with step cutting: drive the implicit viscoplastic model (J2Viscoplasticity)
// through a strain-controlled cyclic load history for a large batch of material points, as a
// finite-element host does, halving the time step whenever a solve does not converge.
//
//   neml2-compile tests/aoti/viscoplastic/model.i --model model --device cpu -d : -o aoti
//   time_stepping aoti/model_aoti.i [POINTS [CSV [DEVICES]]]
//
// POINTS defaults to 100000, CSV to stress_strain.csv, DEVICES to cpu; a comma-separated
// list such as cpu,cuda:0 spreads each step over those devices. The CSV has one row per
// accepted step and sampled point; examples/plot_stress_strain.py draws it.
//
// Exit status: 0 on success, 2 on a user mistake (one line on stderr: a bad argument, a
// missing or damaged artifact, a CSV that cannot be written), 1 when the step would have to
// be cut below the smallest allowed step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
/// The load history: the axial strain of every point follows amplitude * shape(t), a
/// triangle wave (times in seconds) that loads to +1 at t = 10, reverses to -1 at t = 30
/// and unloads at t = 40.
constexpr double t_end = 40.0;
const std::vector<double> corners{0.0, 10.0, 30.0, 40.0};

double
shape(double t)
{
  if (t <= 10)
    return t / 10;
  if (t <= 30)
    return (20 - t) / 10;
  return (t - 40) / 10;
}

/// The first corner of the history after @p t: a step never jumps over a reversal.
double
next_corner(double t)
{
  for (const double c : corners)
    if (c > t + 1e-12)
      return c;
  return t_end;
}

/// The scheduler for a list of devices: Simple for one, StaticHybrid for several.
std::shared_ptr<Scheduler>
scheduler_for(const std::vector<std::string> & devices)
{
  if (devices.size() == 1)
    return std::make_shared<Simple>(Simple::Config{devices.front(), 16384});
  StaticHybrid::Config cfg;
  cfg.devices = devices;
  cfg.batch_sizes = {16384};
  return std::make_shared<StaticHybrid>(cfg);
}

/// Refuse a model that does not have the variables this host provides and reads.
void
check_variables(const Meta & meta)
{
  const std::vector<std::string> inputs{"strain", "old_plastic_strain",
                                        "old_equivalent_plastic_strain", "time_step"};
  const std::vector<std::string> outputs{"stress", "plastic_strain", "equivalent_plastic_strain"};
  for (const auto & name : inputs)
    if (!meta.find(meta.inputs, name))
      throw FatalError("model '" + meta.model + "' (" + meta.type + ") has no input '" + name +
                       "': this host drives J2Viscoplasticity with its default variable names");
  for (const auto & name : outputs)
    if (!meta.find(meta.outputs, name))
      throw FatalError("model '" + meta.model + "' (" + meta.type + ") has no output '" + name +
                       "': this host drives J2Viscoplasticity with its default variable names");
}

/// The host's time loop (the command line as main's); its exit status.
int
drive(int argc, char ** argv)
{
  const std::string stub = argv[1];
  const int64_t points = argc > 2 ? example::integer("POINTS", argv[2], 1) : 100000;
  const std::string csv_path = argc > 3 ? argv[3] : "stress_strain.csv";
  const std::vector<std::string> devices = example::devices("DEVICES", argc > 4 ? argv[4] : "cpu");

  // Time steps. The first step optimistically tries the whole first ramp at once, which
  // is too large for the points loaded hardest; after that, steps are at most dt_max
  // (for a smooth curve). A failed solve halves the step, a success lets it grow by 1.5.
  const double dt_first = 10, dt_max = 1, dt_min = 1e-4;
  double dt = dt_first;

  auto sched = scheduler_for(devices);
  AnyDispatchedModel model = load_model(stub, "model", sched);
  const Meta & meta = model.meta();
  check_variables(meta);
  const auto opts = at::TensorOptions().dtype(meta.dtype);

  // Isochoric tension-compression: axial strain e, lateral strains -e/2 (Mandel order
  // 11, 22, 33, 23, 13, 12), so the volume does not change and the stress is purely
  // deviatoric. Each point gets its own amplitude, from 2% to 10% axial strain.
  const at::Tensor amplitude = at::linspace(0.02, 0.10, points, opts);
  const at::Tensor direction = at::tensor({1.0, -0.5, -0.5, 0.0, 0.0, 0.0}, opts);

  // The state carried from step to step, as the host's quadrature-point storage would.
  at::Tensor plastic_strain = at::zeros({points, 6}, opts);
  at::Tensor equivalent_plastic_strain = at::zeros({points}, opts);

  std::ofstream csv(csv_path);
  if (!csv)
    throw FatalError("cannot write '" + csv_path + "'");
  csv << "step,time,dt,point,strain_11,stress_11,equivalent_plastic_strain\n";
  const std::vector<int64_t> sampled{0, points / 2, points - 1};
  const auto record =
      [&](int step, double t, double h, const at::Tensor & strain, const at::Tensor & stress)
  {
    for (const int64_t p : sampled)
    {
      char row[256];
      std::snprintf(row, sizeof row, "%d,%.6g,%.6g,%lld,%.9g,%.9g,%.9g\n", step, t, h, (long long)p,
                    strain[p][0].item<double>(), stress[p][0].item<double>(),
                    equivalent_plastic_strain[p].item<double>());
      csv << row;
    }
  };
  record(0, 0.0, 0.0, at::zeros({points, 6}, opts), at::zeros({points, 6}, opts));

  std::printf("%s: %lld points, %s on", meta.type.c_str(), (long long)points,
              sched->name().c_str());
  for (const auto & d : sched->devices())
    std::printf(" %s", d.str().c_str());
  std::printf("\n");

  const auto t0 = std::chrono::steady_clock::now();
  double t = 0;
  int steps = 0, cuts = 0;
  while (t < t_end - 1e-12)
  {
    const double h = std::min(dt, next_corner(t) - t);
    const at::Tensor strain = (amplitude * shape(t + h)).unsqueeze(-1) * direction;
    TensorMap out;
    try
    {
      out = model.forward({{"strain", strain},
                           {"old_plastic_strain", plastic_strain},
                           {"old_equivalent_plastic_strain", equivalent_plastic_strain},
                           {"time_step", at::scalar_tensor(h, opts)}}); // unbatched: every point
    }
    catch (const Exception & e)
    {
      // The contract: a recoverable error may succeed with a smaller step; anything
      // else (bad input, a broken artifact, out of memory) would fail again.
      if (!e.recoverable())
        throw;
      ++cuts;
      dt = h / 2;
      std::printf("  t = %.4f, dt = %.3g: %s\n    -> cutting the step to %.3g\n", t, h, e.what(),
                  dt);
      if (dt < dt_min)
      {
        std::fprintf(stderr, "%s: the step would drop below %.1e at t = %g: giving up\n", argv[0],
                     dt_min, t);
        return 1;
      }
      continue; // the state is untouched: retry from the same t
    }
    // Accept: commit the new state, advance, and let the step grow back.
    plastic_strain = out.at("plastic_strain");
    equivalent_plastic_strain = out.at("equivalent_plastic_strain");
    t += h;
    ++steps;
    record(steps, t, h, strain, out.at("stress"));
    if (h >= dt) // not shortened to land on a corner
      dt = std::min(dt_max, 1.5 * dt);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const at::Tensor p_max = equivalent_plastic_strain.max();
  std::printf("done: t = %g in %d steps, %d cut(s), %.2f s (%.2f M point-steps/s); "
              "largest equivalent plastic strain %.3e\n",
              t, steps, cuts, s, 1e-6 * double(points) * steps / s, p_max.item<double>());
  std::printf("wrote %s; plot it with: python3 examples/plot_stress_strain.py %s\n",
              csv_path.c_str(), csv_path.c_str());
  return 0;
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2 || argc > 5)
  {
    std::cerr << "usage: " << argv[0] << " STUB [POINTS [CSV [DEVICES]]]\n";
    return 2;
  }
  return example::guarded("time_stepping", [&] { return drive(argc, argv); });
}
