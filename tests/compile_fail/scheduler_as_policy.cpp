// Must not compile: a scheduler given where DispatchedModel takes an execution policy.
// The ctest test compile_fail_scheduler_as_policy checks that the compiler says what to
// write instead (the static_assert in DispatchedModel.h).
#include "neml2/aoti.h"

using namespace neml2::aoti;

int
main()
{
  DispatchedModel<Simple> m("model_aoti.i", "model", std::make_shared<Simple>(Simple::Config{}));
  return 0;
}
