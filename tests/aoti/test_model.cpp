// Model on one device against analytic linear elasticity, finite differences, and bad input.
#include "fixtures.h"

using namespace neml2_test;

TEST_CASE("forward equals the analytic stress for every batch size", "[model]")
{
  const Model m(stub("forward_single"), "model", "cpu");
  const at::Tensor C = stiffness(100, 0.3);
  for (const int64_t batch : {0, 1, 7, 100000})
  {
    INFO("batch " << batch);
    const at::Tensor eps = strains(batch);
    const at::Tensor sig = m.forward({{"strain", eps}}).at("stress");
    REQUIRE(sig.sizes() == eps.sizes());
    CHECK(close(sig, at::matmul(eps, C.t())));
  }
  // Unbatched in, unbatched out.
  const at::Tensor one = strains(1).squeeze(0);
  const at::Tensor s1 = m.forward({{"strain", one}}).at("stress");
  CHECK(s1.sizes() == one.sizes());
  CHECK(close(s1, at::matmul(C, one)));
}

TEST_CASE("jacobian is the stiffness, unbatched; jvp is C v", "[model]")
{
  const Model m(stub("forward_single"), "model", "cpu");
  const at::Tensor C = stiffness(100, 0.3);
  const at::Tensor eps = strains(7);
  const DerivMap J = m.jacobian({{"strain", eps}});
  CHECK(close(J.at("stress").at("strain"), C));

  const at::Tensor v = strains(7, 99);
  CHECK(close(m.jvp({{"strain", eps}}, {{"strain", v}}).at("stress"), at::matmul(v, C.t())));
  // A missing tangent is zero; an unbatched tangent applies to every point.
  CHECK(close(m.jvp({{"strain", eps}}, {}).at("stress"), at::zeros({7, 6}, f64())));
  const at::Tensor v1 = v[0];
  CHECK(close(m.jvp({{"strain", eps}}, {{"strain", v1}}).at("stress"),
              at::matmul(C, v1).expand({7, 6})));
}

TEST_CASE("promoted parameters: values, in-place mutation, derivatives vs finite differences",
          "[model]")
{
  Model m(stub("elastic_promoted"), "model", "cpu");
  auto & p = m.named_parameters();
  REQUIRE(p.size() == 2);
  CHECK(p.at("model.E").item<double>() == 100000.0);
  CHECK(p.at("model.nu").item<double>() == 0.25);

  const at::Tensor eps = strains(7);
  CHECK(close(m.forward({{"strain", eps}}).at("stress"),
              at::matmul(eps, stiffness(100000, 0.25).t()), 1e-12, 1e-8));
  p.at("model.E").fill_(150e3);
  CHECK(close(m.forward({{"strain", eps}}).at("stress"),
              at::matmul(eps, stiffness(150000, 0.25).t()), 1e-12, 1e-8));
  p.at("model.E").fill_(100e3);

  const DerivMap dp = m.param_jacobian({{"strain", eps}});
  for (const std::string name : {"model.E", "model.nu"})
  {
    INFO(name);
    at::Tensor & q = p.at(name);
    const double q0 = q.item<double>(), h = 1e-6 * q0;
    q.fill_(q0 + h);
    const at::Tensor up = m.forward({{"strain", eps}}).at("stress");
    q.fill_(q0 - h);
    const at::Tensor down = m.forward({{"strain", eps}}).at("stress");
    q.fill_(q0);
    const at::Tensor fd = (up - down) / (2 * h);
    const at::Tensor exact = dp.at("stress").at(name);
    REQUIRE(exact.sizes() == eps.sizes());
    CHECK(((exact - fd).abs().max() / exact.abs().max()).item<double>() < 1e-6);

    // param_vjp is the cotangent contracted with the same block, summed over the batch.
    const at::Tensor cot = strains(7, 5);
    const at::Tensor adj = m.param_vjp({{"strain", eps}}, {{"stress", cot}}).at(name);
    CHECK(adj.dim() == 0);
    CHECK(close(adj, (cot * exact).sum(), 1e-10));
  }
}

TEST_CASE("bad input is a FatalError naming the model, the item and what was expected", "[model]")
{
  Model m(stub("elastic_promoted"), "model", "cpu");
  const Model fwd(stub("forward_single"), "model", "cpu");
  const at::Tensor eps = strains(7);
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(fatal_message([&] { m.forward({}); }),
             ContainsSubstring("model 'model': missing input 'strain' (expected inputs: strain)"));
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", eps}, {"temperature", eps}}); }),
             ContainsSubstring("unknown input 'temperature' (expected inputs: strain)"));
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", eps.to(at::kFloat)}}); }),
             ContainsSubstring("input 'strain' has dtype Float, expected Double"));
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", at::zeros({7, 3}, f64())}}); }),
             ContainsSubstring("input 'strain' has shape (7, 3), expected (6,) or (B, 6,)"));
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", at::zeros({2, 7, 6}, f64())}}); }),
             ContainsSubstring("has shape (2, 7, 6)"));
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", at::Tensor()}}); }),
             ContainsSubstring("input 'strain' is an undefined tensor"));
  CHECK_THAT(fatal_message([&] { m.jvp({{"strain", eps}}, {{"strain", strains(5)}}); }),
             ContainsSubstring("batch sizes disagree: tangent 'strain' has 5 but input 'strain' "
                               "has 7"));
  CHECK_THAT(fatal_message([&] { m.jvp({{"strain", eps}}, {{"stress", eps}}); }),
             ContainsSubstring("unknown tangent 'stress'"));
  CHECK_THAT(fatal_message([&] { m.param_vjp({{"strain", eps}}, {{"strain", eps}}); }),
             ContainsSubstring("unknown cotangent 'strain' (expected outputs: stress)"));
  CHECK_THAT(fatal_message([&] { fwd.param_jacobian({{"strain", eps}}); }),
             ContainsSubstring("graph 'param_jacobian' was not compiled: no parameter was "
                               "promoted: add '-p :'"));
  CHECK_THAT(fatal_message([&] { fwd.param_vjp({{"strain", eps}}, {}); }),
             ContainsSubstring("graph 'param_vjp' was not compiled"));

  // A parameter replaced by a tensor of the wrong shape is caught before the graph runs.
  const at::Tensor saved = m.named_parameters().at("model.E");
  m.named_parameters()["model.E"] = at::ones({3, 2}, f64());
  CHECK_THAT(fatal_message([&] { m.forward({{"strain", eps}}); }),
             ContainsSubstring("parameter 'model.E' must stay a tensor of shape ()"));
  m.named_parameters()["model.E"] = saved;
  CHECK_NOTHROW(m.forward({{"strain", eps}}));

  // The caller's input is untouched by a failed call.
  const at::Tensor copy = eps.clone();
  CHECK_THROWS_AS(m.jvp({{"strain", eps}}, {{"strain", strains(5)}}), FatalError);
  CHECK(identical(eps, copy));
}

TEST_CASE("a model loads only for a device it was compiled for", "[model]")
{
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(fatal_message([] { Model(stub("forward_single"), "other", "cpu"); }),
             ContainsSubstring("no model 'other' in [Models]"));
  CHECK_THAT(fatal_message([] { Model(stub("forward_single"), "model", "tpu"); }),
             ContainsSubstring("invalid device 'tpu'"));
  if (!have_cuda())
    CHECK_THAT(fatal_message([] { Model(stub("forward_single"), "model", "cuda:0"); }),
               ContainsSubstring("no CUDA device is visible"));
}
