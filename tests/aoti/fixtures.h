// Shared by the AOTI tests: artifact paths, the analytic elastic model, and one
// "case" type per execution policy so every test body runs under each of them.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "catch.h"
#include "fatal_message.h"

#include "neml2/aoti.h"

namespace neml2_test
{
using namespace neml2::aoti;

/// Stub of a fixture compiled by the ctest fixture (tests/aoti/<name>/model.i).
inline std::string
stub(const std::string & fixture)
{
  return std::string(NEML2_TEST_ARTIFACTS) + "/" + fixture + "/model_aoti.i";
}

/// Whether a CUDA device is visible (CUDA-named cases run only then).
inline bool
have_cuda()
{
  return neml2::aoti::detail::cuda_device_count() > 0;
}

inline at::TensorOptions
f64()
{
  return at::TensorOptions().dtype(at::kDouble);
}

/// Mandel stiffness of linear isotropic elasticity.
inline at::Tensor
stiffness(double E, double nu)
{
  const double G = E / (2 * (1 + nu));
  const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  const at::Tensor one = at::tensor({1.0, 1.0, 1.0, 0.0, 0.0, 0.0}, f64());
  return 2 * G * at::eye(6, f64()) + lambda * at::outer(one, one);
}

/// Reproducible random strains (B, 6).
inline at::Tensor
strains(int64_t batch, uint64_t seed = 7)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::rand({batch, 6}, gen, f64()) - 0.5;
}

/// Bitwise equality (same shape, dtype, and every element).
inline bool
identical(const at::Tensor & a, const at::Tensor & b)
{
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         at::equal(a.cpu(), b.cpu());
}

/// Close to relative @p rtol.
inline bool
close(const at::Tensor & a, const at::Tensor & b, double rtol = 1e-12, double atol = 1e-12)
{
  return a.sizes() == b.sizes() && at::allclose(a.cpu(), b.cpu(), rtol, atol);
}

/// Relative agreement, scaled by the largest magnitude of @p want; says the error if not.
/// Compare per-point results: bitwise under a policy whose chunks all run on one CPU
/// (Case::exact()), to round-off where a GPU took part.
template <class Case>
void
check_same(const at::Tensor & got, const at::Tensor & want)
{
  if (Case::exact())
    CHECK(identical(got, want));
  else
    CHECK(close(got, want, 1e-12, 1e-9));
}

inline bool
agree(const at::Tensor & got, const at::Tensor & want, double rtol)
{
  const double scale = std::max(want.abs().max().item<double>(), 1e-300);
  const double err = (got - want).abs().max().item<double>() / scale;
  if (err >= rtol)
    UNSCOPED_INFO("relative error " << err);
  return got.sizes() == want.sizes() && err < rtol;
}

// One case per execution policy: make(stub, name, chunk) builds the dispatched model.
/// No scheduler at all.
struct PassThroughCase
{
  static bool exact() { return true; }
  static constexpr bool chunked = false;
  static DispatchedModel<PassThrough> make(const std::string & s, int64_t)
  {
    return load_model(s, "model");
  }
};

/// SyncPolicy<Simple> on the CPU.
struct SyncSimpleCase
{
  static bool exact() { return true; }
  static constexpr bool chunked = true;
  static DispatchedModel<SyncPolicy<Simple>> make(const std::string & s, int64_t chunk)
  {
    return load_model(s, "model", std::make_shared<Simple>(Simple::Config{"cpu", chunk}));
  }
};

/// AsyncPolicy<Simple> on the CPU.
struct AsyncSimpleCase
{
  static bool exact() { return true; }
  static constexpr bool chunked = true;
  static DispatchedModel<AsyncPolicy<Simple>> make(const std::string & s, int64_t chunk)
  {
    return DispatchedModel<AsyncPolicy<Simple>>(
        s, "model", std::make_shared<Simple>(Simple::Config{"cpu", chunk}));
  }
};

/// AsyncPolicy<StaticHybrid> over the CPU (and the first GPU when one is visible).
struct AsyncHybridCase
{
  static constexpr bool chunked = true;
  /// A GPU computes the same formulas with other rounding: compare to round-off there.
  static bool exact() { return !have_cuda(); }
  static DispatchedModel<AsyncPolicy<StaticHybrid>> make(const std::string & s, int64_t chunk)
  {
    StaticHybrid::Config cfg;
    cfg.devices = {"cpu"};
    if (have_cuda())
      cfg.devices.push_back("cuda:0");
    // batch_size 0 means "no chunking" elsewhere; StaticHybrid needs a positive size.
    cfg.batch_sizes = {chunk > 0 ? chunk : 1 << 20};
    return load_model(s, "model", std::make_shared<StaticHybrid>(cfg));
  }
};

/// AnyDispatchedModel around StaticHybrid, selected at run time.
struct AnyHybridCase
{
  static bool exact() { return true; }
  static constexpr bool chunked = true;
  static AnyDispatchedModel make(const std::string & s, int64_t chunk)
  {
    StaticHybrid::Config cfg;
    cfg.devices = {"cpu"};
    cfg.batch_sizes = {chunk > 0 ? chunk : 1 << 20};
    std::shared_ptr<Scheduler> sched = std::make_shared<StaticHybrid>(cfg);
    return load_model(s, "model", sched);
  }
};

/// AsyncPolicy<AdaptiveHybrid> over the CPU (and the first GPU when one is visible). A
/// given chunk size is every chunk's (min_chunk = max_chunks), as the test bodies expect;
/// without one, the chunks are its own.
struct AsyncAdaptiveCase
{
  static constexpr bool chunked = true;
  /// A GPU computes the same formulas with other rounding: compare to round-off there.
  static bool exact() { return !have_cuda(); }
  static DispatchedModel<AsyncPolicy<AdaptiveHybrid>> make(const std::string & s, int64_t chunk)
  {
    AdaptiveHybrid::Config cfg;
    cfg.devices = {"cpu"};
    if (have_cuda())
      cfg.devices.push_back("cuda:0");
    if (chunk > 0)
    {
      cfg.min_chunk = chunk;
      cfg.max_chunks = {chunk};
    }
    return load_model(s, "model", std::make_shared<AdaptiveHybrid>(cfg));
  }
};
} // namespace neml2_test

#define NEML2_ALL_POLICIES                                                                         \
  neml2_test::PassThroughCase, neml2_test::SyncSimpleCase, neml2_test::AsyncSimpleCase,            \
      neml2_test::AsyncHybridCase, neml2_test::AnyHybridCase, neml2_test::AsyncAdaptiveCase
