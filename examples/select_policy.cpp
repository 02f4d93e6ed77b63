// Runtime policy selection: the scheduler, its devices and its chunk sizes come from the
// command line (as a host would read them from its own input file), and the model is held
// as an AnyDispatchedModel, one type whatever the policy.
//
//   select_policy aoti/model_aoti.i --scheduler simple --devices cpu --batch-sizes 4096
//   select_policy aoti/model_aoti.i --scheduler hybrid --devices cpu,cuda:0 --batch-sizes 512,4096
//   select_policy aoti/model_aoti.i --scheduler adaptive --devices cpu,cuda:0
//
// Exit status: 0 when the dispatched result equals the undispatched call, 2 on a user
// mistake (one line on stderr: a bad option, device or chunk size, a missing or damaged
// artifact), 1 otherwise (a mismatch).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
const char * const usage = R"(usage: select_policy STUB [options]

Evaluate the model of STUB (a <model>_aoti.i written by neml2-compile) on a random batch,
dispatched by the scheduler chosen here, and compare with the undispatched call.

options:
  --model NAME            model block name in the stub (default: model)
  --scheduler KIND        simple        one device, chunks on the calling thread (default)
                          async-simple  one device, chunks on worker threads (copies overlap compute)
                          hybrid        several devices at once, chunk sizes given (StaticHybrid)
                          adaptive      several devices at once, chunk sizes learned (AdaptiveHybrid)
  --devices D[,D...]      cpu, cuda or cuda:N (default: cpu)
  --batch-sizes N[,N...]  points per chunk, one per device or one for all (default: 4096);
                          for adaptive, the largest chunk (default: no bound)
  --capacities N[,N...]   points in flight per device (default: 2 x batch size);
                          for adaptive, the memory limit in points (default: no bound)
  --points N              points in the batch (default: 100000)
  -h, --help              print this help
)";

using example::UsageError;

struct Options
{
  std::string stub;
  std::string model = "model";
  std::string scheduler = "simple";
  std::vector<std::string> devices{"cpu"};
  std::vector<int64_t> batch_sizes{4096};
  bool batch_sizes_given = false;
  std::vector<int64_t> capacities;
  int64_t points = 100000;
};

std::vector<int64_t>
to_integers(const std::string & flag, const std::string & text)
{
  std::vector<int64_t> out;
  for (const auto & item : example::list(flag, text))
    out.push_back(example::integer(flag, item));
  return out;
}

/// Parse argv; --help prints the usage and exits.
Options
parse(int argc, char ** argv)
{
  Options o;
  for (int i = 1; i < argc; ++i)
  {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help")
    {
      std::cout << usage;
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0)
    {
      if (!o.stub.empty())
        throw UsageError("unexpected argument '" + arg + "' (the stub is '" + o.stub + "')");
      o.stub = arg;
      continue;
    }
    // --flag value or --flag=value
    const auto eq = arg.find('=');
    if (eq != std::string::npos)
    {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    else if (i + 1 < argc)
      value = argv[++i];
    else
      throw UsageError(arg + ": missing value");

    if (arg == "--model")
      o.model = value;
    else if (arg == "--scheduler")
      o.scheduler = value;
    else if (arg == "--devices")
      o.devices = example::list(arg, value);
    else if (arg == "--batch-sizes")
    {
      o.batch_sizes = to_integers(arg, value);
      o.batch_sizes_given = true;
    }
    else if (arg == "--capacities")
      o.capacities = to_integers(arg, value);
    else if (arg == "--points")
      o.points = example::integer(arg, value);
    else
      throw UsageError("unknown option '" + arg + "' (see --help)");
  }
  if (o.stub.empty())
    throw UsageError("missing STUB, the <model>_aoti.i written by neml2-compile (see --help)");
  if (o.scheduler != "simple" && o.scheduler != "async-simple" && o.scheduler != "hybrid" &&
      o.scheduler != "adaptive")
    throw UsageError("--scheduler: expected simple, async-simple, hybrid or adaptive, got '" +
                     o.scheduler + "'");
  const bool several = o.scheduler == "hybrid" || o.scheduler == "adaptive";
  if (!several && o.devices.size() != 1)
    throw UsageError("--scheduler " + o.scheduler + " drives one device, got " +
                     std::to_string(o.devices.size()) + ": use --scheduler hybrid or adaptive");
  if (!several && (o.batch_sizes.size() != 1 || o.capacities.size() > 1))
    throw UsageError("--scheduler " + o.scheduler +
                     " takes one batch size and at most one capacity");
  if (o.points < 0)
    throw UsageError("--points: expected a number >= 0, got " + std::to_string(o.points));
  return o;
}

/**
 * The model under the chosen policy. Simple, StaticHybrid and AdaptiveHybrid go through
 * load_model with the scheduler known only as a Scheduler; an execution policy other than the
 * scheduler's default (AsyncPolicy<Simple>) is named by constructing its DispatchedModel. Scheduler
 * configuration errors (a bad device, a capacity below its batch size) are FatalErrors thrown here.
 */
std::pair<AnyDispatchedModel, std::shared_ptr<Scheduler>>
load(const Options & o)
{
  if (o.scheduler == "hybrid")
  {
    StaticHybrid::Config cfg;
    cfg.devices = o.devices;
    cfg.batch_sizes = o.batch_sizes;
    cfg.capacities = o.capacities;
    std::shared_ptr<Scheduler> s = std::make_shared<StaticHybrid>(cfg);
    return {load_model(o.stub, o.model, s), s};
  }
  if (o.scheduler == "adaptive")
  {
    AdaptiveHybrid::Config cfg;
    cfg.devices = o.devices;
    if (o.batch_sizes_given)
      cfg.max_chunks = o.batch_sizes;
    cfg.memory_limits = o.capacities;
    std::shared_ptr<Scheduler> s = std::make_shared<AdaptiveHybrid>(cfg);
    return {load_model(o.stub, o.model, s), s};
  }
  const auto s = std::make_shared<Simple>(Simple::Config{
      o.devices.front(), o.batch_sizes.front(), o.capacities.empty() ? 0 : o.capacities.front()});
  if (o.scheduler == "async-simple")
    return {DispatchedModel<AsyncPolicy<Simple>>(o.stub, o.model, s), s};
  return {load_model(o.stub, o.model, std::shared_ptr<Scheduler>(s)), s};
}
/// Run the model of @p o under its policy and compare with the undispatched call.
int
run(const Options & o)
{
  auto [model, scheduler] = load(o);
  std::printf("%s (%s), model '%s':", scheduler->name().c_str(),
              model.asynchronous() ? "asynchronous" : "synchronous", o.model.c_str());
  // 0 and the largest int64_t mean "no bound" in the scheduler's lists.
  const auto bound = [](int64_t n)
  {
    return n == 0 || n == std::numeric_limits<int64_t>::max() ? std::string("any")
                                                              : std::to_string(n);
  };
  for (std::size_t d = 0; d < scheduler->devices().size(); ++d)
    std::printf(" %s[batch %s, capacity %s]", scheduler->devices()[d].str().c_str(),
                bound(scheduler->batch_sizes()[d]).c_str(),
                bound(scheduler->capacities()[d]).c_str());
  std::printf("\n");

  // Random inputs for every input the model declares, on the CPU.
  TensorMap inputs;
  for (const auto & v : model.meta().inputs)
  {
    std::vector<int64_t> shape{o.points};
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    inputs[v.name] = at::rand(shape, at::TensorOptions().dtype(model.meta().dtype)) * 1e-3;
  }

  model.forward(inputs); // the first call pays one-time costs (thread pools, GPU context)
  const auto t0 = std::chrono::steady_clock::now();
  const TensorMap out = model.forward(inputs);
  const double ms =
      1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const DispatchInfo & info = model.last_dispatch();
  std::printf("%lld points in %.2f ms: %s", (long long)o.points, ms,
              info.short_circuit ? "one direct call (short circuit)"
                                 : (std::to_string(info.chunks) + " chunks").c_str());
  if (!info.short_circuit && scheduler->devices().size() > 1)
    for (std::size_t d = 0; d < info.device_chunks.size(); ++d)
      std::printf(", %zu on %s", info.device_chunks[d], scheduler->devices()[d].str().c_str());
  std::printf("\n");

  // The same batch without a scheduler. CPU chunks are bitwise equal to it; a GPU
  // rounds differently, so compare to round-off when one took part.
  const TensorMap want = load_model(o.stub, o.model).forward(inputs);
  bool gpu = false;
  for (const auto & d : scheduler->devices())
    gpu = gpu || d.is_cuda();
  const double rtol = model.meta().dtype == at::kDouble ? 1e-10 : 1e-5;
  bool ok = true;
  for (const auto & [name, value] : want)
  {
    const at::Tensor & got = out.at(name);
    const double diff = o.points > 0 ? (got - value).abs().max().item<double>() : 0.0;
    const double scale = o.points > 0 ? value.abs().max().item<double>() : 0.0;
    ok = ok && (gpu ? diff <= rtol * scale : at::equal(got, value));
  }
  std::printf("%s the undispatched call\n", ok ? "matches" : "DIFFERS FROM");
  return ok ? 0 : 1;
}
} // namespace

int
main(int argc, char ** argv)
{
  return example::guarded("select_policy", [&] { return run(parse(argc, argv)); });
}
