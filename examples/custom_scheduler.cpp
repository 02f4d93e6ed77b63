// A scheduler written outside the library: guided self-scheduling, as OpenMP's
// schedule(guided) does it. Each chunk takes a share of the points still to assign,
// so chunks start large (little overhead) and shrink towards the end (the devices
// finish together). It models the scheduler concept (neml2/aoti/schedulers/concept.h),
// so load_model and AnyDispatchedModel take it like the library's own.
//
// Usage: custom_scheduler STUB [POINTS] [DEVICES]
//   STUB     the <model>_aoti.i written by neml2-compile (an elastic model: input strain)
//   POINTS   batch size (default 100000)
//   DEVICES  comma-separated devices (default: cpu, plus cuda:0 when a GPU is visible)
// Exit status: 0 when the results equal the direct call's, 2 on a user mistake (one line on
// stderr), 1 otherwise.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

/// Guided self-scheduling over a list of devices: the next chunk is the points left
/// divided by twice the device count, at least min_chunk; the least-loaded device gets it.
class Guided : public Scheduler
{
public:
  /// Several devices run at once.
  static constexpr bool asynchronous = true;

  Guided(const std::vector<std::string> & devices, int64_t min_chunk) : _min_chunk(min_chunk)
  {
    if (devices.empty())
      throw FatalError("Guided: no devices");
    if (min_chunk <= 0)
      throw FatalError("Guided: min_chunk must be > 0");
    for (const auto & d : devices)
      _devices.emplace_back(d);
    // Two chunks of the largest size in flight per device at most.
    _batch_sizes.assign(_devices.size(), 0);
    _capacities.assign(_devices.size(), std::numeric_limits<int64_t>::max());
    _priorities.assign(_devices.size(), 0);
  }

  std::string name() const override { return "Guided"; }

  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    const auto n = int64_t(_devices.size());
    const int64_t size = std::min(remaining, std::max(_min_chunk, remaining / (2 * n)));
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    // Hand out work only to a device with at most one chunk in flight.
    if (load[std::size_t(least)] > 2 * size)
      return std::nullopt;
    return Assignment{DeviceIndex(least), size};
  }

  // A batch too small to split runs whole on the first device.
  std::optional<DeviceIndex> short_circuit(std::uint64_t, int64_t batch,
                                           const at::Device &) const override
  {
    return batch <= _min_chunk ? std::optional<DeviceIndex>(0) : std::nullopt;
  }

private:
  int64_t _min_chunk;
};

static_assert(check_scheduler<Guided>());

/// Dispatch @p batch random strains through Guided over @p names, typed and type-erased, and
/// compare with the direct call: 0 when they agree, 1 when not.
static int
check_guided(const std::string & stub, int64_t batch, const std::vector<std::string> & names)
{
  auto guided = std::make_shared<Guided>(names, 4096);
  auto m = load_model(stub, "model", guided); // typed: AsyncPolicy<Guided>
  AnyDispatchedModel any = load_model(stub, "model", std::shared_ptr<Scheduler>(guided));
  auto direct = load_model(stub, "model");

  const at::Tensor strain = 1e-3 * at::rand({batch, 6}, at::dtype(at::kDouble));
  const at::Tensor want = direct.forward({{"strain", strain}}).at("stress");
  const at::Tensor got = m.forward({{"strain", strain}}).at("stress");
  const at::Tensor got_any = any.forward({{"strain", strain}}).at("stress");

  const auto & info = m.last_dispatch();
  std::printf("Guided over %zu device(s): %zu chunks for %lld points (", names.size(), info.chunks,
              (long long)batch);
  for (std::size_t i = 0; i < names.size(); ++i)
    std::printf("%s%s: %zu", i ? ", " : "", names[i].c_str(), info.device_chunks[i]);
  const double diff = (got - want).abs().max().item<double>();
  const double diff_any = (got_any - want).abs().max().item<double>();
  std::printf(")\nmax difference from the direct call: %.1e (typed), %.1e (AnyDispatchedModel)\n",
              diff, diff_any);
  const double tol = 1e-12 * (want.abs().max().item<double>() + 1);
  if (!(diff <= tol && diff_any <= tol))
  {
    std::fprintf(stderr, "custom_scheduler: results differ from the direct call\n");
    return 1;
  }
  return 0;
}

int
main(int argc, char ** argv)
{
  if (argc < 2 || argc > 4)
  {
    std::fprintf(stderr, "usage: %s STUB [POINTS] [DEVICES]\n", argv[0]);
    return 2;
  }
  return example::guarded("custom_scheduler",
                          [&]
                          {
                            const int64_t batch =
                                argc > 2 ? example::integer("POINTS", argv[2], 1) : 100000;
                            std::vector<std::string> names{"cpu"};
                            if (argc > 3)
                              names = example::devices("DEVICES", argv[3]);
                            else if (devices().size() > 1) // the CPU, then each GPU it sees
                              names.push_back("cuda:0");
                            return check_guided(argv[1], batch, names);
                          });
}
