// The smallest host program: load a compiled model, evaluate a batch chunked on the CPU.
//
//   consumer aoti/model_aoti.i [BATCH]
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "neml2/aoti.h"

int
main(int argc, char ** argv)
{
  if (argc < 2 || argc > 3)
  {
    std::cerr << "usage: " << argv[0] << " STUB [BATCH]\n";
    return 2;
  }
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 10000;
  try
  {
    using namespace neml2::aoti;
    auto sched = std::make_shared<SimpleScheduler>(SimpleScheduler::Config{"cpu", 4096});
    auto model = load_model(argv[1], "model", sched);

    TensorMap inputs;
    for (const auto & v : model.meta().inputs)
    {
      std::vector<int64_t> shape{batch};
      shape.insert(shape.end(), v.shape.begin(), v.shape.end());
      inputs[v.name] = at::full(shape, 1e-3, at::TensorOptions().dtype(model.meta().dtype));
    }
    const TensorMap out = model.forward(inputs);
    std::printf("model '%s' (%s): %lld points in %zu chunks\n", model.name().c_str(),
                model.meta().type.c_str(), (long long)batch, model.last_dispatch().chunks);
    for (const auto & [name, value] : out)
    {
      const at::Tensor first = value[0].flatten().to(at::kDouble);
      std::printf("  %s[0] =", name.c_str());
      for (int64_t i = 0; i < first.numel(); ++i)
        std::printf(" %.6g", first[i].item<double>());
      std::printf("\n");
    }
    return 0;
  }
  catch (const neml2::aoti::Exception & e)
  {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 1;
  }
}
