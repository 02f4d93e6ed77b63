// A host program's locale must not change what model_meta.json says: finite-element codes
// call setlocale, and a comma-decimal locale once read nu = 0.25 as 0.
#include "comma_locale.h"
#include "fixtures.h"

#include <cstdlib>

using namespace neml2_test;

TEMPLATE_TEST_CASE("a comma-decimal locale changes no parameter and no result", "[locale]",
                   NEML2_ALL_POLICIES)
{
  const CommaLocale locale;
  INFO("no comma-decimal locale: neither de_DE nor fr_FR is installed and the ctest fixture "
       "comma_locale could not generate de_DE.UTF-8 (install the Debian package locales, as "
       "scripts/setup.sh does)");
  REQUIRE(locale.active());
  // The locale is in force: the C library now stops reading 0.25 at the '.'.
  REQUIRE(std::strtod("0.25", nullptr) == 0.0);

  auto m = TestType::make(stub("elastic_promoted"), 16);
  const auto p = m.named_parameters();
  CHECK(p.at("model.E").template item<double>() == 100000.0);
  CHECK(p.at("model.nu").template item<double>() == 0.25);
  const at::Tensor eps = strains(50);
  const at::Tensor stress = m.forward({{"strain", eps}}).at("stress");
  CHECK(close(stress, at::matmul(eps, stiffness(100000.0, 0.25))));
}
