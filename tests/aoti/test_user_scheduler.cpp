// A scheduler written outside the library, through every way of loading a model.
#include "fixtures.h"

#include <limits>

using namespace neml2_test;

namespace
{
/// Splits every batch into `parts` chunks of nearly equal size over its devices in turn;
/// batches of at most `whole` points run as one direct call on the first device.
class EvenSplit : public Scheduler
{
public:
  EvenSplit(std::vector<std::string> devices, int64_t parts, int64_t whole)
      : _parts(parts),
        _whole(whole)
  {
    for (const auto & d : devices)
      _devices.emplace_back(d);
    _batch_sizes.assign(_devices.size(), 0);
    _capacities.assign(_devices.size(), std::numeric_limits<int64_t>::max());
    _priorities.assign(_devices.size(), 0);
  }
  std::string name() const override { return "EvenSplit"; }
  void begin(std::uint64_t, int64_t batch) const noexcept override
  {
    _batch = batch;
    _handed = 0;
    ++_begins;
  }
  std::optional<Assignment> next(const std::vector<int64_t> &, int64_t remaining) const override
  {
    const int64_t size = std::min(remaining, (_batch + _parts - 1) / _parts);
    return Assignment{std::size_t(_handed++) % _devices.size(), size};
  }
  void observe(const Completion & c) const noexcept override { _observed += c.size; }
  std::optional<std::size_t> short_circuit(std::uint64_t, int64_t batch,
                                           const at::Device &) const override
  {
    return batch <= _whole ? std::optional<std::size_t>(0) : std::nullopt;
  }
  void observe_dispatch(std::uint64_t, int64_t batch, double seconds) const noexcept override
  {
    ++_dispatches;
    _last_batch = batch;
    _last_seconds = seconds;
  }

  mutable int64_t _batch = 0, _handed = 0, _observed = 0, _last_batch = 0;
  mutable int _begins = 0, _dispatches = 0;
  mutable double _last_seconds = 0;

private:
  int64_t _parts, _whole;
};

static_assert(check_scheduler<EvenSplit>());

/// The one-argument short_circuit of old: it would hide the base's and never be called,
/// which check_scheduler refuses (concept.h).
struct OldShortCircuit
{
  std::optional<std::size_t> short_circuit(int64_t) const { return 0; }
};
static_assert(neml2::aoti::detail::has_old_short_circuit<OldShortCircuit>::value);
static_assert(!neml2::aoti::detail::has_old_short_circuit<EvenSplit>::value);
static_assert(std::is_same_v<default_policy_t<EvenSplit>, AsyncPolicy<EvenSplit>>,
              "a scheduler that does not say gets AsyncPolicy");

/// The same body for the typed model and the two type-erased ones.
template <class M>
void
check_even_split(M & m, EvenSplit & s)
{
  const Model direct(stub("forward_single"), "model", "cpu");
  const at::Tensor eps = strains(103);
  const at::Tensor want = direct.forward({{"strain", eps}}).at("stress");
  const int begins = s._begins, dispatches = s._dispatches;
  CHECK(identical(m.forward({{"strain", eps}}).at("stress"), want));
  CHECK(m.last_dispatch().chunks == 4); // ceil(103 / 4) = 26: 26 + 26 + 26 + 25
  CHECK_FALSE(m.last_dispatch().short_circuit);
  CHECK(s._begins == begins + 1);
  CHECK(s._observed >= 103);
  // observe_dispatch: once per dispatch, spread or whole, with its size and wall time
  CHECK(s._dispatches == dispatches + 1);
  CHECK(s._last_batch == 103);
  CHECK(s._last_seconds > 0);

  // small batches run whole, as the scheduler says
  const at::Tensor few = strains(5);
  CHECK(identical(m.forward({{"strain", few}}).at("stress"),
                  direct.forward({{"strain", few}}).at("stress")));
  CHECK(m.last_dispatch().short_circuit);
  CHECK(s._dispatches == dispatches + 2);
  CHECK(s._last_batch == 5);
  CHECK(s._last_seconds > 0);
}
} // namespace

TEST_CASE("user scheduler: typed load_model gives AsyncPolicy<EvenSplit>", "[dispatch][user]")
{
  auto s = std::make_shared<EvenSplit>(std::vector<std::string>{"cpu"}, 4, 8);
  auto m = load_model(stub("forward_single"), "model", s);
  static_assert(std::is_same_v<decltype(m), DispatchedModel<AsyncPolicy<EvenSplit>>>);
  check_even_split(m, *s);
}

TEST_CASE("user scheduler: run-time load_model accepts it through the base class",
          "[dispatch][user]")
{
  for (const std::vector<std::string> & devices :
       {std::vector<std::string>{"cpu"}, std::vector<std::string>{"cpu", "cpu"}})
  {
    INFO(devices.size() << " device(s)");
    auto s = std::make_shared<EvenSplit>(devices, 4, 8);
    AnyDispatchedModel m =
        load_model(stub("forward_single"), "model", std::shared_ptr<Scheduler>(s));
    // one device: SyncPolicy on the calling thread; several: a thread per device
    CHECK(m.asynchronous() == (devices.size() > 1));
    check_even_split(m, *s);
  }
}

TEST_CASE("user scheduler: errors in its chunks follow the library's contract", "[dispatch][user]")
{
  auto s = std::make_shared<EvenSplit>(std::vector<std::string>{"cpu", "cpu"}, 4, 8);
  AnyDispatchedModel m = load_model(stub("forward_single"), "model", std::shared_ptr<Scheduler>(s));
  m.set_chunk_hook(
      [](const at::Device &, std::size_t ordinal, int64_t, int64_t)
      {
        if (ordinal == 2)
          throw ConvergenceError("chunk 2 did not converge");
      });
  const at::Tensor eps = strains(103), before = eps.clone();
  CHECK_THROWS_AS(m.forward({{"strain", eps}}), ConvergenceError);
  CHECK(identical(eps, before));
  CHECK(s->_dispatches == 0); // a dispatch that failed is not timed
  m.set_chunk_hook({});
  CHECK_NOTHROW(m.forward({{"strain", eps}}));
  CHECK(s->_dispatches == 1);
}
