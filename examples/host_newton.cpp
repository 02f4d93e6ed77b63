// A host in miniature: a point cloud of the implicit viscoplastic model (J2Viscoplasticity)
// under uniaxial stress. The host prescribes each point's axial strain and solves, with its
// own Newton loop, for the lateral strain that makes the lateral stress vanish: every
// iteration calls forward and jacobian. It keeps every point's state in its own arrays
// (std::vector<double>, as a finite-element code holds quadrature-point data), which the
// model reads and writes through at::from_blob without copies. The material is graded: each
// point has its own yield stress, a per-point parameter held in the host's array too. A step
// whose solve fails at some points is cut at those points only (failed_points()); the others
// go on. At the end, the last state is evaluated once more, dispatched and by one direct
// Model on the CPU, and the two must agree.
//
//   neml2-compile tests/aoti/viscoplastic/model.i --model model --device cpu -d : -p :
//     --per-point model.sy -o aoti        (one command line)
//   host_newton aoti/model_aoti.i [POINTS [DEVICES]]
//
// POINTS defaults to 20000, DEVICES to cpu (a list such as cpu,cuda:0 spreads each call).
// Exit status: 0 when every point reached the end of the load with zero lateral stress and the
// dispatched and direct stresses agree, 1 otherwise (a point's step would have to be cut
// below the smallest step, among others), 2 on a user mistake.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
/// The host's own storage for n points: plain arrays, point-major, as a mesh would hold them.
struct Points
{
  explicit Points(int64_t n)
      : n(n),
        strain(6 * n, 0.0),
        plastic_strain(6 * n, 0.0),
        equivalent_plastic_strain(n, 0.0),
        time_step(n, 0.0),
        stress(6 * n, 0.0),
        new_plastic_strain(6 * n, 0.0),
        new_equivalent_plastic_strain(n, 0.0),
        tangent(36 * n, 0.0),
        time(n, 0.0),
        dt(n, 0.0),
        lateral(n, 0.0),
        axial_stress(n, 0.0),
        lateral_stress(n, 0.0),
        yield_stress(n, 0.0)
  {
  }

  /// @p v as a (n, *shape) tensor over the same memory: the model reads or writes it there.
  at::Tensor view(std::vector<double> & v, std::vector<int64_t> shape)
  {
    shape.insert(shape.begin(), n);
    return at::from_blob(v.data(), shape, at::TensorOptions().dtype(at::kDouble));
  }

  int64_t n;
  // the model's inputs and the state committed at the end of the last accepted step
  std::vector<double> strain, plastic_strain, equivalent_plastic_strain, time_step;
  // the model's results, written in place by forward and jacobian
  std::vector<double> stress, new_plastic_strain, new_equivalent_plastic_strain, tangent;
  // each point's own time, next time step, and its accepted lateral strain and stresses
  std::vector<double> time, dt, lateral, axial_stress, lateral_stress;
  // the material: each point's yield stress, a per-point parameter of the model
  std::vector<double> yield_stress;
};

/// The prescribed axial strain at time @p t: a ramp to 5% over 10 s, scaled per point.
double
axial_strain(double t, double scale)
{
  return 0.05 * scale * std::min(t, 10.0) / 10.0;
}

int
drive(int argc, char ** argv)
{
  const std::string stub = argv[1];
  const int64_t n = argc > 2 ? example::integer("POINTS", argv[2], 1) : 20000;
  const auto devices = example::devices("DEVICES", argc > 3 ? argv[3] : "cpu");
  const double t_end = 10, dt_start = 10, dt_min = 1e-3, tol = 1e-6; // stress tolerance, MPa

  std::shared_ptr<Scheduler> sched;
  if (devices.size() == 1)
    sched = std::make_shared<Simple>(Simple::Config{devices.front(), 4096});
  else
    sched = std::make_shared<StaticHybrid>(StaticHybrid::Config{devices, {4096}, {}, {}});
  AnyDispatchedModel model = load_model(stub, "model", sched);
  if (model.meta().dtype != at::kDouble)
    throw FatalError("model '" + model.meta().model + "': this host holds float64 arrays");

  Points p(n);
  std::fill(p.dt.begin(), p.dt.end(), dt_start); // one step to the end: too large for most
  // A graded material: the yield stress runs from 80 to 120 MPa across the points.
  for (int64_t i = 0; i < n; ++i)
    p.yield_stress[i] = 80 + 40 * double(i) / double(n);
  const at::Tensor yield_stress = p.view(p.yield_stress, {});
  model.set_parameter("model.sy", yield_stress);
  const TensorMap inputs{{"strain", p.view(p.strain, {6})},
                         {"old_plastic_strain", p.view(p.plastic_strain, {6})},
                         {"old_equivalent_plastic_strain", p.view(p.equivalent_plastic_strain, {})},
                         {"time_step", p.view(p.time_step, {})}};
  TensorMap results{{"stress", p.view(p.stress, {6})},
                    {"plastic_strain", p.view(p.new_plastic_strain, {6})},
                    {"equivalent_plastic_strain", p.view(p.new_equivalent_plastic_strain, {})}};
  DerivMap tangents{{"stress", {{"strain", p.view(p.tangent, {6, 6})}}}};

  // A parked point (done loading, or its step failed this round) is still part of every call,
  // since the host's arrays hold the whole batch: it relaxes for a moment at its accepted
  // strain, which converges, and nothing of it is committed.
  const auto scale = [&](int64_t i) { return 0.5 + double(i) / double(n); };
  std::vector<char> parked;
  const auto park = [&](int64_t i)
  {
    parked[i] = 1;
    p.time_step[i] = 1e-6;
    p.strain[6 * i] = axial_strain(p.time[i], scale(i));
    p.strain[6 * i + 1] = p.strain[6 * i + 2] = p.lateral[i];
  };

  int rounds = 0, calls = 0, cuts = 0;
  while (true)
  {
    // The points still loading take their step; the others are parked (below).
    parked.assign(n, 0);
    int64_t active = 0;
    for (int64_t i = 0; i < n; ++i)
    {
      const double h = std::min(p.dt[i], t_end - p.time[i]);
      if (h <= 0)
        park(i);
      else
      {
        p.time_step[i] = h;
        p.strain[6 * i] = axial_strain(p.time[i] + h, scale(i));
        ++active;
      }
    }
    if (active == 0)
      break;
    ++rounds;

    // Newton on each point's lateral strain (e22 = e33 = x): the lateral stress must vanish.
    std::vector<char> failed(n, 0);
    bool balanced = false;
    for (int it = 0; it < 20 && !balanced; ++it)
    {
      try
      {
        model.forward(inputs, results);
        model.jacobian(inputs, tangents);
        calls += 2;
      }
      catch (const Exception & e)
      {
        const auto where = e.recoverable() ? failed_points(e) : std::nullopt;
        if (!where)
          throw;
        // The step is cut where the model's solve failed, and only there: those points
        // take no step for the rest of this round, the others iterate on.
        for (int64_t k = 0; k < where->rows.numel(); ++k)
        {
          const int64_t i = where->rows[k].item<int64_t>();
          failed[i] = 1;
          park(i);
        }
        continue;
      }
      double worst = 0;
      for (int64_t i = 0; i < n; ++i)
      {
        if (parked[i])
          continue;
        const double r = p.stress[6 * i + 1];             // sigma_22 (= sigma_33)
        const double * J = &p.tangent[36 * i];            // d stress / d strain, row-major
        const double slope = J[6 * 1 + 1] + J[6 * 1 + 2]; // d sigma_22 / d x
        p.strain[6 * i + 1] -= r / slope;
        p.strain[6 * i + 2] = p.strain[6 * i + 1];
        worst = std::max(worst, std::fabs(r));
      }
      balanced = worst <= tol;
    }
    if (!balanced)
    {
      std::fprintf(stderr, "host_newton: the lateral stress did not vanish in 20 iterations\n");
      return 1;
    }
    // Accept the step where the model converged, cut it where it did not.
    for (int64_t i = 0; i < n; ++i)
    {
      if (failed[i])
      {
        p.dt[i] = std::min(p.dt[i], t_end - p.time[i]) / 2;
        ++cuts;
        if (p.dt[i] < dt_min)
        {
          std::fprintf(stderr, "host_newton: point %lld needs a step below %g s at t = %g s\n",
                       (long long)i, dt_min, p.time[i]);
          return 1;
        }
        continue;
      }
      if (parked[i])
        continue;
      p.time[i] += p.time_step[i];
      p.lateral[i] = p.strain[6 * i + 1];
      p.axial_stress[i] = p.stress[6 * i];
      p.lateral_stress[i] = p.stress[6 * i + 1];
      std::copy_n(&p.new_plastic_strain[6 * i], 6, &p.plastic_strain[6 * i]);
      p.equivalent_plastic_strain[i] = p.new_equivalent_plastic_strain[i];
      p.dt[i] = std::min(2 * p.time_step[i], 1.0);
    }
  }

  // Every point at the end of its ramp, under uniaxial stress.
  double lateral = 0, axial_min = 1e300, axial_max = 0;
  for (int64_t i = 0; i < n; ++i)
  {
    lateral = std::max(lateral, std::fabs(p.lateral_stress[i]));
    axial_min = std::min(axial_min, p.axial_stress[i]);
    axial_max = std::max(axial_max, p.axial_stress[i]);
  }
  // The check: the last state once more, dispatched, and through one direct Model on the CPU
  // with the same yield stresses, undispatched.
  model.forward(inputs, results);
  Model direct(stub, "model", "cpu");
  direct.set_parameter("model.sy", yield_stress);
  const at::Tensor want = direct.forward(inputs).at("stress");
  const double mismatch =
      (results.at("stress") - want).abs().max().item<double>() / want.abs().max().item<double>();
  std::printf("%lld points on %s: %d rounds, %d calls, %d point steps cut; axial stress %.1f to "
              "%.1f MPa, largest lateral stress %.2e MPa; dispatched and direct stresses differ by "
              "%.1e (relative)\n",
              (long long)n, sched->name().c_str(), rounds, calls, cuts, axial_min, axial_max,
              lateral, mismatch);
  return lateral <= tol && cuts > 0 && mismatch <= 1e-10 ? 0 : 1;
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::fprintf(stderr, "usage: host_newton STUB [POINTS [DEVICES]]\n");
    return 2;
  }
  return example::guarded("host_newton", [&] { return drive(argc, argv); });
}
