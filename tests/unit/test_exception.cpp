// The error contract: types, recoverability, aggregation and normalization of foreign errors.
#include "catch.h"

#include <optional>

#include "neml2/aoti/Exception.h"

using namespace neml2::aoti;

namespace
{
template <class F>
std::shared_ptr<const Exception>
normalized(F && throw_it)
{
  try
  {
    throw_it();
  }
  catch (...)
  {
    return normalize_current_exception("ctx");
  }
  return nullptr;
}
} // namespace

TEST_CASE("ConvergenceError is recoverable, FatalError is not", "[exception]")
{
  const ConvergenceError c("diverged");
  const FatalError f("bad shape");
  CHECK(c.recoverable());
  CHECK_FALSE(f.recoverable());
  CHECK(std::string(c.what()) == "diverged");
  // Both are catchable as the base and as std::runtime_error.
  CHECK_THROWS_AS(c.rethrow(), ConvergenceError);
  CHECK_THROWS_AS(f.rethrow(), FatalError);
  CHECK_THROWS_AS(f.rethrow(), std::runtime_error);
}

TEST_CASE("clone keeps the dynamic type", "[exception]")
{
  const ConvergenceError c("diverged");
  const std::shared_ptr<const Exception> e = c.clone();
  CHECK(dynamic_cast<const ConvergenceError *>(e.get()) != nullptr);
  CHECK_THROWS_AS(e->rethrow(), ConvergenceError);
}

TEST_CASE("AggregateError is recoverable only if every error is", "[exception]")
{
  auto rec = std::make_shared<ConvergenceError>("a");
  auto fat = std::make_shared<FatalError>("b");
  const AggregateError all_rec({rec, rec->clone()});
  const AggregateError mixed({rec, fat});
  CHECK(all_rec.recoverable());
  CHECK_FALSE(mixed.recoverable());
  REQUIRE(mixed.errors().size() == 2);
  CHECK(std::string(mixed.errors()[1]->what()) == "b");
  const std::string msg = mixed.what();
  CHECK(msg.find("2 errors") != std::string::npos);
  CHECK(msg.find("[0] a") != std::string::npos);
  CHECK(msg.find("[1] b") != std::string::npos);
  CHECK_THROWS_AS(mixed.rethrow(), AggregateError);
}

TEST_CASE("failed points: the mask, a copy that keeps them, and the merge of several errors",
          "[exception]")
{
  const ConvergenceError plain("no points");
  CHECK(plain.points() == nullptr);
  CHECK_FALSE(failed_points(plain));

  const ConvergenceError late("rows 7 and 9", FailedPoints{10, at::tensor({7, 9}, at::kLong),
                                                           at::tensor({0.5, 0.25}, at::kDouble)});
  const ConvergenceError early("row 2", FailedPoints{10, at::tensor({int64_t{2}}, at::kLong),
                                                     at::tensor({2.0}, at::kDouble)});
  REQUIRE(late.points());
  const at::Tensor mask = late.points()->converged();
  REQUIRE(mask.sizes() == at::IntArrayRef{10});
  CHECK(mask.sum().item<int64_t>() == 8);
  CHECK_FALSE(mask[7].item<bool>());
  CHECK_FALSE(mask[9].item<bool>());

  // A copy (as a worker's report is) shares the points.
  const std::shared_ptr<const Exception> copy = late.clone();
  const std::optional<FailedPoints> copied = failed_points(*copy);
  REQUIRE(copied);
  CHECK(copied->rows.equal(late.points()->rows));

  // An AggregateError merges the points of its ConvergenceErrors in row order, with
  // each residual beside its row; other errors add none.
  const AggregateError all({late.clone(), std::make_shared<FatalError>("lost"), early.clone()});
  const std::optional<FailedPoints> merged = failed_points(all);
  REQUIRE(merged);
  CHECK(merged->batch == 10);
  CHECK(merged->rows.equal(at::tensor({2, 7, 9}, at::kLong)));
  CHECK(merged->residual.equal(at::tensor({2.0, 0.5, 0.25}, at::kDouble)));
  CHECK(merged->converged().sum().item<int64_t>() == 7);
  CHECK_FALSE(failed_points(AggregateError({std::make_shared<FatalError>("lost")})));
}

TEST_CASE("foreign errors are normalized to FatalError keeping their message", "[exception]")
{
  auto c10err = normalized([] { TORCH_CHECK(false, "torch says no"); });
  REQUIRE(dynamic_cast<const FatalError *>(c10err.get()));
  CHECK(std::string(c10err->what()).rfind("ctx: torch says no", 0) == 0);

  auto oom = normalized([] { throw std::bad_alloc(); });
  REQUIRE(dynamic_cast<const FatalError *>(oom.get()));
  CHECK(std::string(oom->what()) == "ctx: out of memory (std::bad_alloc)");

  auto std_err = normalized([] { throw std::runtime_error("driver error"); });
  CHECK(std::string(std_err->what()) == "ctx: driver error");
  CHECK_FALSE(std_err->recoverable());

  auto weird = normalized([] { throw 42; });
  CHECK(std::string(weird->what()) == "ctx: unknown non-standard exception");

  auto ours = normalized([] { throw ConvergenceError("keep me"); });
  REQUIRE(dynamic_cast<const ConvergenceError *>(ours.get()));
  CHECK(std::string(ours->what()) == "keep me");
}

TEST_CASE("guard lets only library exceptions escape", "[exception]")
{
  CHECK(guard("g", [] { return 7; }) == 7);
  CHECK_THROWS_AS(guard("g", []() -> int { throw std::out_of_range("x"); }), FatalError);
  CHECK_THROWS_AS(guard("g", []() -> int { throw ConvergenceError("x"); }), ConvergenceError);
}
